/*
 * test_cases.h — one program, several named behaviours (as libuv lists each
 * TEST_IMPL): the program keeps a table of cases, {name, function, what it
 * checks}, and runs the one named on its command line:
 *
 *     api_ptask --list          the case names, one a line
 *     api_ptask --help          the names with what each checks
 *     api_ptask poll            run the case `poll` (under proustrun as before)
 *
 * Options of the program (`--pull`, ...) may come before or after the name.
 * tests/api.cmake registers one CTest per case and variant
 * (api_<program>_<case>_<variant>, function api_cases) and a test
 * api_<program>_cases that fails when `--list` and the registered cases
 * differ, so that a case added to a table cannot go unrun.
 */
#ifndef PROUST_TEST_CASES_H
#define PROUST_TEST_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tu_case {
    const char *name; /* [a-z0-9_]: part of the CTest name */
    void (*run)(void);
    const char *what; /* one line: the behaviour checked */
};

#define TU_NCASES(table) (sizeof(table) / sizeof((table)[0]))

static inline void tu_cases_usage(FILE *f, const char *prog, const struct tu_case *cases,
                                  size_t n, int with_what)
{
    if (with_what)
        fprintf(f, "usage: %s [options] <case> | --list | --help\ncases:\n", prog);
    for (size_t i = 0; i < n; i++) {
        if (with_what)
            fprintf(f, "  %-22s %s\n", cases[i].name, cases[i].what);
        else
            fprintf(f, "%s\n", cases[i].name);
    }
}

/* The case named by the first argument that is not an option; --list and
 * --help print and exit 0; no case, two cases or an unknown one exit 2
 * (a run that checks nothing must not pass). */
static inline const struct tu_case *tu_case_select(int argc, char **argv,
                                                   const struct tu_case *cases, size_t n)
{
    const char *prog = argc > 0 ? argv[0] : "test";
    const char *want = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            tu_cases_usage(stdout, prog, cases, n, 0);
            exit(0);
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            tu_cases_usage(stdout, prog, cases, n, 1);
            exit(0);
        }
        if (argv[i][0] == '-')
            continue; /* the program's own options */
        if (want) {
            fprintf(stderr, "%s: one case at a time (got %s and %s)\n", prog, want, argv[i]);
            exit(2);
        }
        want = argv[i];
    }
    if (!want) {
        fprintf(stderr, "%s: name a case\n", prog);
        tu_cases_usage(stderr, prog, cases, n, 1);
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(cases[i].name, want) == 0)
            return &cases[i];
    fprintf(stderr, "%s: no case named '%s'\n", prog, want);
    tu_cases_usage(stderr, prog, cases, n, 1);
    exit(2);
}

#endif
