# D3: a FIFO at the SMBIOS table doctor reads.
expect_exit=2
expect_stderr='DMI: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() { tree_with doctor-healthy "sys/firmware/dmi/tables/DMI" fifo; }
run() { "$G" doctor --root t; }
