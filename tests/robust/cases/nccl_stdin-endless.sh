# NCCL topology file on standard input that never ends (a <system> tag, then
# comments forever): the read stops at the cap, 64 MiB, and says so.
expect_exit=2
expect_stderr='^gpurig: -: larger than 64 MiB'
time_limit=10
run() { { printf '<system version="1">\n'; yes '<!-- x -->'; } | "$G" topo --input -; }
