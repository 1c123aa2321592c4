/* Option tables, as git's parse-options: each command owns its option
 * struct and an array of row groups; a row names one option (its spelling,
 * its argument in --help, its help text) and where its value goes (an
 * offset into the group's struct). The shared groups (source, output,
 * NCCL, monitor, plan) are arrays here that a command lists beside its own
 * rows. One parser reads argv against the rows, and --help prints its
 * option lines from the same rows: an option is one row (and, if its
 * spelling is new, a name in options.c's list of every spelling).
 * Ownership: rows and groups are static and read-only; parsed strings
 * point into argv (the caller's), nothing is allocated. */
#ifndef GPURIG_CLI_OPTIONS_H
#define GPURIG_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/util.h"

/* Values stay text (STRING) when their checks and their error lines belong
 * to the command or the core (`--size 4x`: "expected a size like 256M");
 * a CALLBACK parses at once when every command shares one check. */
enum gr_option_kind { GR_OPTION_FLAG, GR_OPTION_STRING, GR_OPTION_CALLBACK };

struct gr_option {
  const char *name;  /* long name, without "--" */
  char short_name;   /* -v; 0 for none */
  const char *arg;   /* the argument's name in --help ("DIR"); NULL for a flag */
  enum gr_option_kind kind;
  size_t offset;     /* the field in the group's struct: bool (FLAG), const char * (STRING), any (CALLBACK) */
  /* CALLBACK: 0, or -1 after printing one error line naming cmd */
  int (*parse)(const char *cmd, const char *value, void *field);
  const char *empty; /* an empty value is refused with this line; NULL: the value's own check decides */
  const char *help;  /* --help text; lines after the first are indented under it */
  unsigned flags;    /* GR_OPTION_* below */
};

/* -j works but --help names only --json, as it always has */
#define GR_OPTION_SHORT_UNLISTED 1u

#define GR_OPT_FLAG_ROW(long_, short_, type, field, help_) \
  {.name = long_, .short_name = short_, .kind = GR_OPTION_FLAG, .offset = offsetof(type, field), .help = help_}
#define GR_OPT_STRING_ROW(long_, arg_, type, field, empty_, help_) \
  {.name = long_, .arg = arg_, .kind = GR_OPTION_STRING, .offset = offsetof(type, field), .empty = empty_, \
   .help = help_}

/* A command's rows: a shared group or its own, and where the group's struct
 * lies in the command's struct. check, if any, runs after the whole command
 * line was read (a rule across options of the group): 0, or -1 after one
 * error line. */
struct gr_option_group {
  const struct gr_option *rows;
  size_t n;
  size_t base;
  int (*check)(const char *cmd, const void *group_struct);
};
#define GR_OPTION_GROUP(rows_, cmd_type, member, check_) \
  {rows_, sizeof(rows_) / sizeof(rows_[0]), offsetof(cmd_type, member), check_}
#define GR_OPTION_OWN(rows_, check_) {rows_, sizeof(rows_) / sizeof(rows_[0]), 0, check_}

enum gr_positional { GR_POSITIONAL_NONE, GR_POSITIONAL_ONE, GR_POSITIONAL_MANY };

/* What a command reads: its groups in order (their checks run in this
 * order) and how many positional arguments it takes. */
struct gr_command_options {
  const struct gr_option_group *groups;
  size_t n;
  enum gr_positional positional;
};

/* Positional arguments and --help, common to every command. */
struct gr_parsed {
  bool help;
  const char *positional; /* GR_POSITIONAL_ONE: the argument, or NULL */
  char **args;            /* GR_POSITIONAL_MANY: all of them */
  int nargs;
};

/* Parses argv (argv[0] is the subcommand) into opts, the command's struct,
 * zeroed first. Options and positional arguments may come in any order;
 * `--` ends the options; --help stops at once. An option another command
 * takes "does not apply here"; an unknown one gets the closest this command
 * takes. Returns 0, or -1 after one error line (exit GR_EXIT_FAIL). */
int gr_parse_options(int argc, char **argv, const struct gr_command_options *spec, void *opts, size_t size,
                     struct gr_parsed *p);

/* One "  --name ARG    text" line per name, in the order given, from the
 * command's rows; an entry "name=TEXT" replaces the row's help with TEXT
 * (a command that says it in its own words). width: the option column. */
void gr_print_option_help(FILE *out, const struct gr_command_options *spec, const char *const *names, int width);

/* The shared groups. */
struct gr_source_opts {
  const char *root, *input, *rig, *gpu;
};
extern const struct gr_option gr_rows_source[2]; /* --root --input */
extern const struct gr_option gr_rows_rig[1];    /* --rig */
extern const struct gr_option gr_rows_gpu[1];    /* --gpu */
/* --root, --input and --rig select different inputs: at most one */
int gr_check_source(const char *cmd, const void *src);
/* --gpu fills a --rig's slots (topo, report, doctor): not without one */
int gr_check_gpu_has_rig(const char *cmd, const void *src);

struct gr_output_opts {
  bool json, verbose;
};
extern const struct gr_option gr_rows_json[1];    /* --json, -j */
extern const struct gr_option gr_rows_verbose[1]; /* --verbose, -v */

extern const struct gr_option gr_rows_nccl[1];    /* --nccl-version into a struct gr_nccl_version */

/* watch and export: how long and how often to sample, the kernel log, and
 * what to write (export: --listen, --textfile; watch: --svg); burn lists
 * its own rows for the --interval and --svg it takes of these. */
struct gr_monitor_opts {
  bool once;
  const char *count, *interval, *kmsg, *listen, *textfile, *svg, *psu;
};
extern const struct gr_option gr_rows_monitor[8];

/* --model --params --job ... (gpurig plan --help) into a struct
 * gr_plan_args (plan/request.h), all but its gpu */
extern const struct gr_option gr_rows_plan[32];

#endif
