/* The one reader of user-named files and the one writer (base/file.h), and
 * the gathered-tree check (base/fs.h): what they refuse, and that a write
 * never lands anywhere but the path asked. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "base/fs.h"

static char *scratch(void)
{
  char *dir = xstrdup("/tmp/gpurig-file-XXXXXX");
  assert_non_null(mkdtemp(dir));
  return dir;
}

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path)
{
  struct gr_file f;
  struct gr_err err = {0};
  assert_int_equal(gr_file_read(path, 1 << 20, 0, &f, &err), 0);
  char *s = xstrdup(f.data);
  gr_file_free(&f);
  return s;
}

static void expect_refused(const char *path, unsigned flags, const char *words)
{
  struct gr_file f;
  struct gr_err err = {0};
  assert_int_equal(gr_file_read(path, 1 << 20, flags, &f, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (!strstr(err.msg, words))
    fail_msg("'%s' lacks '%s'", err.msg, words);
  assert_null(f.data);
}

static void reader_refuses_what_is_not_a_file(void **state)
{
  (void)state;
  char *dir = scratch();
  char *fifo = xasprintf("%s/f", dir), *loop = xasprintf("%s/loop", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(symlink(loop, loop), 0);
  expect_refused(fifo, GR_FILE_STDIN, "a FIFO (named pipe), not a regular file");
  expect_refused("/dev/zero", 0, "a character device, not a regular file");
  expect_refused(dir, 0, "a directory, not a file");
  expect_refused(loop, 0, "a loop of symbolic links");
  expect_refused("-", 0, "standard input is not read here");
  expect_refused("", 0, "an empty file name");
  unlink(fifo);
  unlink(loop);
  rmdir(dir);
  free(fifo);
  free(loop);
  free(dir);
}

static char *make_log(const char *dir, int lines)
{
  char *path = xasprintf("%s/log", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (int i = 0; i < lines; i++)
    fprintf(f, "line %d of an ordinary log\n", i);
  assert_int_equal(fclose(f), 0);
  return path;
}

static void reader_caps_while_reading(void **state)
{
  (void)state;
  char *dir = scratch();
  char *log = make_log(dir, 3000);
  struct gr_file r;
  struct gr_err err = {0};
  assert_int_equal(gr_file_read(log, 1000, 0, &r, &err), -1);
  assert_non_null(strstr(err.msg, "log: larger than 1000 B"));
  /* the tail of a file over the cap: the newest lines, whole, and what was skipped */
  assert_int_equal(gr_file_read(log, 100, GR_FILE_TAIL, &r, &err), 0);
  struct stat st;
  assert_int_equal(stat(log, &st), 0);
  assert_true(r.len <= 100 && r.len > 0);
  assert_int_equal(r.skipped + r.len, (size_t)st.st_size);
  assert_true(strncmp(r.data, "line ", 5) == 0);
  assert_non_null(strstr(r.data, "line 2999 of an ordinary log\n"));
  gr_file_free(&r);
  unlink(log);
  rmdir(dir);
  free(log);
  free(dir);
}

/* Standard input where it is accepted, with the cap holding on an endless
 * stream (/dev/zero as stdin stands for `yes | gpurig`). */
static void reader_stdin_is_capped(void **state)
{
  (void)state;
  int saved = dup(STDIN_FILENO);
  int zero = open("/dev/zero", O_RDONLY);
  assert_true(saved >= 0 && zero >= 0);
  assert_int_equal(dup2(zero, STDIN_FILENO), STDIN_FILENO);
  struct gr_file f;
  struct gr_err err = {0};
  assert_int_equal(gr_file_read("-", 1 << 20, GR_FILE_STDIN, &f, &err), -1);
  assert_non_null(strstr(err.msg, "-: larger than 1 MiB"));
  /* in tail mode too: an endless stream is not read forever */
  assert_int_equal(gr_file_read("/dev/stdin", 4096, GR_FILE_STDIN | GR_FILE_TAIL, &f, &err), -1);
  assert_non_null(strstr(err.msg, "/dev/stdin: larger than 64 KiB"));
  dup2(saved, STDIN_FILENO);
  close(saved);
  close(zero);
}

static void plant_links(const char *target, const char *victim, int n)
{
  for (int k = 0; k < n; k++) {
    char *name = xasprintf("%s.tmp.%ld.%d", target, (long)getpid(), k);
    assert_int_equal(symlink(victim, name), 0);
    free(name);
  }
}

static void remove_links(const char *target, int n)
{
  for (int k = 0; k < n; k++) {
    char *name = xasprintf("%s.tmp.%ld.%d", target, (long)getpid(), k);
    unlink(name);
    free(name);
  }
}

/* A symlink planted at every name the writer might use for its temporary
 * file is never followed: the link's target keeps its content. */
static void writer_never_follows_a_planted_link(void **state)
{
  (void)state;
  char *dir = scratch();
  char *victim = xasprintf("%s/victim", dir), *target = xasprintf("%s/snap.xml", dir);
  struct gr_err err = {0};
  write_text(victim, "precious\n");
  plant_links(target, victim, GR_OUT_TMP_TRIES);
  assert_int_equal(gr_file_write(target, "<xml/>\n", 7, &err), -1);
  assert_non_null(strstr(err.msg, "names for a temporary file beside it exist"));
  remove_links(target, GR_OUT_TMP_TRIES);
  plant_links(target, victim, GR_OUT_TMP_TRIES - 1);
  assert_int_equal(gr_file_write(target, "<xml/>\n", 7, &err), 0);
  char *got = slurp(target), *kept = slurp(victim);
  assert_string_equal(got, "<xml/>\n");
  assert_string_equal(kept, "precious\n");
  remove_links(target, GR_OUT_TMP_TRIES - 1);
  unlink(target);
  unlink(victim);
  rmdir(dir);
  free(got);
  free(kept);
  free(victim);
  free(target);
  free(dir);
}

/* A target that is a device node, a FIFO or a symlink is refused, and
 * nothing replaces it; a regular file is replaced whole. */
static void writer_refuses_a_target_that_is_not_a_regular_file(void **state)
{
  (void)state;
  char *dir = scratch();
  char *fifo = xasprintf("%s/fifo", dir), *link = xasprintf("%s/link", dir), *reg = xasprintf("%s/reg", dir);
  struct gr_err err = {0};
  assert_int_equal(mkfifo(fifo, 0600), 0);
  write_text(reg, "old content that is longer\n");
  assert_int_equal(symlink(reg, link), 0);
  assert_int_equal(gr_file_write(fifo, "x", 1, &err), -1);
  assert_non_null(strstr(err.msg, "a FIFO (named pipe); gpurig writes only a new file or over a regular file"));
  assert_int_equal(gr_file_write(link, "x", 1, &err), -1);
  assert_non_null(strstr(err.msg, "a symbolic link;"));
  assert_int_equal(gr_file_write(dir, "x", 1, &err), -1);
  assert_non_null(strstr(err.msg, "a directory;"));
  assert_int_equal(gr_file_write(reg, "new\n", 4, &err), 0);
  char *got = slurp(reg);
  assert_string_equal(got, "new\n");
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_int_equal(lstat(fifo, &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  unlink(fifo);
  unlink(link);
  unlink(reg);
  rmdir(dir);
  free(got);
  free(fifo);
  free(link);
  free(reg);
  free(dir);
}

/* SIGTERM (or SIGINT, SIGHUP) while a file is being written removes the
 * temporary file; the target is never created half-way. */
static void writer_cleans_up_on_a_signal(void **state)
{
  (void)state;
  char *dir = scratch();
  char *target = xasprintf("%s/out.xml", dir);
  int sigs[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      struct gr_out w;
      struct gr_err err = {0};
      if (gr_out_open(target, &w, &err) != 0)
        _exit(3);
      gr_out_write(&w, "<partial", 8);
      raise(sigs[i]);
      _exit(4); /* not reached: the signal ends the process */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sigs[i]);
    char *tmp = xasprintf("%s.tmp.%ld.0", target, (long)pid);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(access(target, F_OK), -1);
    free(tmp);
  }
  assert_int_equal(rmdir(dir), 0); /* empty: nothing was left behind */
  free(target);
  free(dir);
}

/* A gathered tree is refused whole, before anything reads it, when it holds
 * a FIFO, a device node, a link out of it or a symlink loop; links that stay
 * inside are fine. */
static void tree_check_refuses_what_would_hang_or_escape(void **state)
{
  (void)state;
  struct {
    const char *what, *words;
  } cases[] = {
      {"fifo", "a FIFO (named pipe) in a gathered tree"},
      {"zero", "leads out of the --root tree (to /dev/zero)"},
      {"escape", "leads out of the --root tree"},
      {"loop", "a loop of symbolic links"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *root = tu_tree_copy("epyc-riser");
    char *f = xasprintf("%s/proc/cpuinfo", root);
    struct gr_fs fs;
    struct gr_err err = {0};
    assert_int_equal(gr_fs_init(&fs, root), 0);
    assert_int_equal(gr_fs_check_tree(&fs, &err), 0);
    unlink(f);
    if (strcmp(cases[i].what, "fifo") == 0)
      assert_int_equal(mkfifo(f, 0600), 0);
    else if (strcmp(cases[i].what, "zero") == 0)
      assert_int_equal(symlink("/dev/zero", f), 0);
    else if (strcmp(cases[i].what, "escape") == 0)
      assert_int_equal(symlink("../../../../../../../../etc/hostname", f), 0);
    else
      assert_int_equal(symlink("cpuinfo", f), 0);
    assert_int_equal(gr_fs_check_tree(&fs, &err), -1);
    if (!strstr(err.msg, cases[i].words) || !strstr(err.msg, "proc/cpuinfo"))
      fail_msg("%s: '%s' lacks '%s'", cases[i].what, err.msg, cases[i].words);
    /* and a read through the fs never blocks on it */
    char buf[64];
    assert_true(gr_fs_read_str(&fs, "/proc/cpuinfo", buf, sizeof(buf)) != 0 || strcmp(cases[i].what, "escape") == 0);
    free(f);
    tu_tree_remove(root);
  }
}

/* Attributes: a NUL byte is binary data, more than the cap is an error,
 * not a cut value. */
static void attributes_binary_or_oversized_are_errors(void **state)
{
  (void)state;
  char *root = tu_tree_copy("epyc-riser");
  struct gr_fs fs;
  char buf[16];
  assert_int_equal(gr_fs_init(&fs, root), 0);
  char *f = xasprintf("%s/proc/x", root);
  FILE *fp = fopen(f, "w");
  assert_non_null(fp);
  fwrite("16\0", 1, 3, fp);
  fclose(fp);
  assert_int_equal(gr_fs_read_str(&fs, "/proc/x", buf, sizeof(buf)), -GR_EBINARY);
  assert_string_equal(gr_fs_strerror(-GR_EBINARY), "binary data, not text");
  write_text(f, "0123456789abcdefXYZ\n");
  assert_int_equal(gr_fs_read_str(&fs, "/proc/x", buf, sizeof(buf)), -GR_ETOOBIG);
  write_text(f, "0123456789abcd\n"); /* 15 bytes: fits in 16 with the NUL */
  assert_int_equal(gr_fs_read_str(&fs, "/proc/x", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "0123456789abcd");
  free(f);
  tu_tree_remove(root);
}

/* A newline or another control character in a path is shown escaped, so an
 * error that quotes it stays one line (REL-16); a long one is cut with "...". */
static void shown_text_is_one_line(void **state)
{
  (void)state;
  char buf[64];
  assert_string_equal(gr_shown("a\nb\rc\td\x1b" "e\x7f", buf, sizeof(buf)), "a\\nb\\rc\\td\\x1be\\x7f");
  assert_string_equal(gr_shown("plain/path.svg", buf, sizeof(buf)), "plain/path.svg");
  assert_string_equal(gr_shown(NULL, buf, sizeof(buf)), "");
  char small[8];
  assert_string_equal(gr_shown("0123456789", small, sizeof(small)), "0123...");
  assert_string_equal(gr_shown("0123456", small, sizeof(small)), "0123456");
  struct gr_err err = {0};
  gr_fail(&err, GR_EXIT_FAIL, "--listen %s: not ADDR:PORT", "127.0.0.1\ngpurig: export: serving http://0.0.0.0:9400/");
  assert_null(strchr(err.msg, '\n'));
  assert_string_equal(err.msg, "--listen 127.0.0.1\\ngpurig: export: serving http://0.0.0.0:9400/: not ADDR:PORT");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reader_refuses_what_is_not_a_file),
      cmocka_unit_test(reader_caps_while_reading),
      cmocka_unit_test(reader_stdin_is_capped),
      cmocka_unit_test(writer_never_follows_a_planted_link),
      cmocka_unit_test(writer_refuses_a_target_that_is_not_a_regular_file),
      cmocka_unit_test(writer_cleans_up_on_a_signal),
      cmocka_unit_test(tree_check_refuses_what_would_hang_or_escape),
      cmocka_unit_test(attributes_binary_or_oversized_are_errors),
      cmocka_unit_test(shown_text_is_one_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
