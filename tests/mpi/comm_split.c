/*
 * comm_split.c — communicator constructors: MPI_Comm_dup/split/create/
 * create_group/split_type, compare, groups, names and info hints, context
 * recycling, MPI-4 hardware splits; and point-to-point on the new
 * communicators, checking that
 * traffic with the same tags on different communicators never mixes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdbool.h>

#include "mpitest.h"

static int wrank, wsize;

/* World rank of each rank of comm (in rank order). */
static void world_ranks(MPI_Comm comm, int *out)
{
    MPI_Group g, w;
    int n;
    MPI_CHECK(MPI_Comm_group(comm, &g));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    MPI_CHECK(MPI_Group_size(g, &n));
    int idx[64];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_CHECK(MPI_Group_translate_ranks(g, n, idx, w, out));
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Group_free(&w));
}

/* Ring exchange on comm: send my rank*1000+salt right, get left's. */
static void ring(MPI_Comm comm, int salt)
{
    int r, n;
    MPI_CHECK(MPI_Comm_rank(comm, &r));
    MPI_CHECK(MPI_Comm_size(comm, &n));
    int out = r * 1000 + salt, in = -1;
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 3, &in, 1, MPI_INT, (r + n - 1) % n, 3,
                           comm, &st));
    int left = (r + n - 1) % n;
    CHECK(in == left * 1000 + salt, "ring on a %d-rank communicator: got %d, expected %d", n, in,
          left * 1000 + salt);
    CHECK(st.MPI_SOURCE == left, "ring: status source %d, expected %d", st.MPI_SOURCE, left);
}

static void test_split(void)
{
    /* Odd/even. */
    MPI_Comm oe;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &oe));
    int r, n, w[64];
    MPI_CHECK(MPI_Comm_rank(oe, &r));
    MPI_CHECK(MPI_Comm_size(oe, &n));
    CHECK(n == (wsize + 1 - wrank % 2) / 2, "odd/even size %d", n);
    CHECK(r == wrank / 2, "odd/even rank %d", r);
    world_ranks(oe, w);
    for (int i = 0; i < n; i++)
        CHECK(w[i] == 2 * i + wrank % 2, "odd/even member %d is world %d", i, w[i]);
    ring(oe, 1);

    /* Key reversal: one color, reversed order. */
    MPI_Comm rev;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 7, wsize - wrank, &rev));
    MPI_CHECK(MPI_Comm_rank(rev, &r));
    CHECK(r == wsize - 1 - wrank, "reversed rank %d", r);
    int res;
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK(res == (wsize > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(world, reversed) %d", res);
    /* Equal keys keep the parent's order. */
    MPI_Comm same;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &same));
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, same, &res));
    CHECK(res == MPI_CONGRUENT, "compare(world, split with equal keys) %d", res);
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "compare(world, world) %d", res);
    MPI_CHECK(MPI_Comm_compare(oe, rev, &res));
    CHECK(res == (wsize > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare(odd/even, reversed) %d",
          res);

    /* MPI_UNDEFINED gives MPI_COMM_NULL. */
    MPI_Comm und;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank == 0 ? MPI_UNDEFINED : 1, 0, &und));
    if (wrank == 0) {
        CHECK(und == MPI_COMM_NULL, "MPI_UNDEFINED color did not give MPI_COMM_NULL");
    } else {
        MPI_CHECK(MPI_Comm_size(und, &n));
        CHECK(n == wsize - 1, "split without rank 0: size %d", n);
        ring(und, 2);
        MPI_CHECK(MPI_Comm_free(&und));
    }

    /* Same tag on four communicators: every receive must get its own
     * communicator's message, whatever the order of posting. */
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm comms[4] = {MPI_COMM_WORLD, dup, rev, same};
    int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
    int rdest[4] = {right, right, wsize - 1 - right, right};
    int rsrc[4] = {left, left, wsize - 1 - left, left};
    int out[4], in[4];
    MPI_Request req[4];
    for (int i = 0; i < 4; i++) {
        out[i] = 100 * i + wrank;
        MPI_CHECK(MPI_Isend(&out[i], 1, MPI_INT, rdest[i], 9, comms[i], &req[i]));
    }
    for (int i = 3; i >= 0; i--) {
        MPI_Status st;
        MPI_CHECK(MPI_Recv(&in[i], 1, MPI_INT, i % 2 ? MPI_ANY_SOURCE : rsrc[i], 9, comms[i],
                           &st));
        CHECK(in[i] == 100 * i + left, "communicator %d received %d, expected %d", i, in[i],
              100 * i + left);
        CHECK(st.MPI_SOURCE == rsrc[i], "communicator %d: source %d, expected %d", i,
              st.MPI_SOURCE, rsrc[i]);
    }
    MPI_CHECK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));

    MPI_CHECK(MPI_Comm_free(&oe));
    MPI_CHECK(MPI_Comm_free(&rev));
    MPI_CHECK(MPI_Comm_free(&same));
    MPI_CHECK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
}

static void test_create(void)
{
    MPI_Group world, even, odd;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int ranges[1][3] = {{0, wsize - 1, 2}};
    MPI_CHECK(MPI_Group_range_incl(world, 1, ranges, &even));
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, even, &c));
    if (wrank % 2) {
        CHECK(c == MPI_COMM_NULL, "Comm_create: non-member got a communicator");
    } else {
        int r, n;
        MPI_CHECK(MPI_Comm_rank(c, &r));
        MPI_CHECK(MPI_Comm_size(c, &n));
        CHECK(r == wrank / 2 && n == (wsize + 1) / 2, "Comm_create: rank %d size %d", r, n);
        ring(c, 3);
        MPI_CHECK(MPI_Comm_free(&c));
    }
    /* MPI-2.2: disjoint groups, each process passing its own. */
    MPI_Group mine;
    int first[1][3] = {{wrank % 2, wsize - 1, 2}};
    first[0][1] = wsize - 1 - ((wsize - 1 - wrank % 2) % 2); /* last rank of my parity */
    MPI_CHECK(MPI_Group_range_incl(world, 1, first, &mine));
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, mine, &c));
    {
        int r, n;
        MPI_CHECK(MPI_Comm_rank(c, &r));
        MPI_CHECK(MPI_Comm_size(c, &n));
        CHECK(r == wrank / 2 && n == (wrank % 2 ? wsize / 2 : (wsize + 1) / 2),
              "Comm_create with disjoint groups: rank %d size %d", r, n);
        ring(c, 10);
        MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_CHECK(MPI_Group_free(&mine));
    /* create_group: only the odd ranks call it. */
    if (wsize > 1) {
        MPI_CHECK(MPI_Group_difference(world, even, &odd));
        if (wrank % 2) {
            MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, odd, 42, &c));
            int r, n;
            MPI_CHECK(MPI_Comm_rank(c, &r));
            MPI_CHECK(MPI_Comm_size(c, &n));
            CHECK(r == wrank / 2 && n == wsize / 2, "Comm_create_group: rank %d size %d", r, n);
            ring(c, 4);
            MPI_Comm d;
            MPI_CHECK(MPI_Comm_dup(c, &d));
            ring(d, 5);
            MPI_CHECK(MPI_Comm_free(&d));
            MPI_CHECK(MPI_Comm_free(&c));
        }
        MPI_CHECK(MPI_Group_free(&odd));
    }
    /* Meanwhile the even ranks (and then all) keep using the parent. */
    ring(MPI_COMM_WORLD, 6);
    MPI_CHECK(MPI_Group_free(&even));
    MPI_CHECK(MPI_Group_free(&world));
}

static void test_split_type(void)
{
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -wrank, MPI_INFO_NULL,
                                  &node));
    int r, n;
    MPI_CHECK(MPI_Comm_rank(node, &r));
    MPI_CHECK(MPI_Comm_size(node, &n));
    /* Every rank of these tests runs on this host. */
    CHECK(n == wsize && r == wsize - 1 - wrank, "split_type shared: rank %d size %d", r, n);
    ring(node, 7);
    MPI_CHECK(MPI_Comm_free(&node));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, wrank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED,
                                  0, MPI_INFO_NULL, &node));
    if (wrank % 2) {
        CHECK(node == MPI_COMM_NULL, "split_type MPI_UNDEFINED did not give MPI_COMM_NULL");
    } else {
        MPI_CHECK(MPI_Comm_size(node, &n));
        CHECK(n == (wsize + 1) / 2, "split_type of the even ranks: size %d", n);
        MPI_CHECK(MPI_Comm_free(&node));
    }
}

/* MPI-4 hardware splits. Every rank runs on this host; a rank bound to one
 * cpu shares a "PU" communicator with exactly the ranks bound to it, an
 * unbound one gets MPI_COMM_NULL there. */
static MPI_Comm split_hw(int type, const char *kind)
{
    MPI_Info info = MPI_INFO_NULL;
    if (kind) {
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", kind));
    }
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, info, &c));
    if (kind)
        MPI_CHECK(MPI_Info_free(&info));
    return c;
}

static int size_of(MPI_Comm c)
{
    int n = 0;
    if (c != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_size(c, &n));
    return n;
}

static void test_split_hw(void)
{
    static const char *const whole[] = {"mpi_shared_memory", "Machine", "machine"};
    for (int i = 0; i < 3; i++) {
        MPI_Comm c = split_hw(MPI_COMM_TYPE_HW_GUIDED, whole[i]);
        CHECK(size_of(c) == wsize, "HW_GUIDED %s: size %d", whole[i], size_of(c));
        ring(c, 11 + i);
        MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_Comm c = split_hw(MPI_COMM_TYPE_HW_GUIDED, "no_such_thing");
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an unknown kind gave a communicator");
    c = split_hw(MPI_COMM_TYPE_HW_GUIDED, NULL);
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED without the info key gave a communicator");
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    int ncpu = CPU_COUNT(&set), cpu = -1;
    for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
        if (CPU_ISSET(i, &set))
            cpu = i;
    c = split_hw(MPI_COMM_TYPE_HW_GUIDED, "PU");
    if (ncpu > 1) {
        CHECK(c == MPI_COMM_NULL, "HW_GUIDED PU: a rank on %d cpus got a communicator", ncpu);
    } else {
        int n = size_of(c), *cpus = malloc((size_t)wsize * sizeof *cpus);
        CHECK(n >= 1 && cpus, "HW_GUIDED PU: a rank bound to cpu %d got no communicator", cpu);
        MPI_CHECK(MPI_Allgather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, c));
        for (int i = 0; i < n; i++)
            CHECK(cpus[i] == cpu, "HW_GUIDED PU: cpu %d shares with cpu %d", cpu, cpus[i]);
        free(cpus);
        MPI_CHECK(MPI_Comm_free(&c));
    }
    /* one rank asks, the others pass MPI_UNDEFINED: one collective */
    for (int root = 0; root < wsize && root < 3; root++) {
        int type = root % 2 ? MPI_COMM_TYPE_SHARED : MPI_COMM_TYPE_HW_GUIDED;
        c = split_hw(wrank == root ? type : MPI_UNDEFINED, "mpi_shared_memory");
        CHECK(wrank == root ? size_of(c) == 1 : c == MPI_COMM_NULL,
              "split type %d at rank %d alone: size %d", type, root, size_of(c));
        if (c != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&c));
    }
    c = split_hw(MPI_COMM_TYPE_HW_UNGUIDED, NULL);
    int n = size_of(c);
    CHECK(c == MPI_COMM_NULL || (n >= 1 && n < wsize),
          "HW_UNGUIDED: size %d is not a strict subset of %d", n, wsize);
    if (c != MPI_COMM_NULL) {
        ring(c, 17);
        MPI_CHECK(MPI_Comm_free(&c));
    }
}

/* A split with one info key (none when key is NULL). */
static MPI_Comm split_key(int type, const char *key, const char *value)
{
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    if (key)
        MPI_CHECK(MPI_Info_set(info, key, value));
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, type, wrank, info, &c));
    MPI_CHECK(MPI_Info_free(&info));
    return c;
}

static bool info_says(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    return flag && !strcmp(v, want);
}

/* MPI-4.1: MPI_COMM_TYPE_RESOURCE_GUIDED (hardware kinds, hwloc:// names,
 * process sets), MPI_Get_hw_resource_info, and the kind an unguided split
 * chose, named in its info. */
static void test_split_resource(void)
{
    static const char *const whole[] = {"mpi_shared_memory", "hwloc://Machine", "Machine"};
    for (int i = 0; i < 3; i++) {
        MPI_Comm c = split_key(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_hw_resource_type", whole[i]);
        CHECK(size_of(c) == wsize, "RESOURCE_GUIDED %s: size %d", whole[i], size_of(c));
        MPI_CHECK(MPI_Comm_free(&c));
    }
    static const char *const none[][2] = {{NULL, NULL},
                                          {"foo", "bar"},
                                          {"mpi_hw_resource_type", "@dont-thread-on-me@"},
                                          {"mpi_hw_resource_type", "hwloc://NoSuchThing"},
                                          {"mpi_pset_name", "mpi://no_such_set"}};
    for (int i = 0; i < 5; i++) {
        MPI_Comm c = split_key(MPI_COMM_TYPE_RESOURCE_GUIDED, none[i][0], none[i][1]);
        CHECK(c == MPI_COMM_NULL, "RESOURCE_GUIDED %s=%s gave a communicator", none[i][0],
              none[i][1]);
    }
    /* process sets: the world together, each process alone */
    MPI_Comm c = split_key(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://WORLD");
    CHECK(size_of(c) == wsize, "RESOURCE_GUIDED mpi://WORLD: size %d", size_of(c));
    ring(c, 21);
    MPI_CHECK(MPI_Comm_free(&c));
    c = split_key(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://self");
    CHECK(size_of(c) == 1, "RESOURCE_GUIDED mpi://SELF: size %d", size_of(c));
    MPI_CHECK(MPI_Comm_free(&c));
    c = split_key(MPI_COMM_TYPE_HW_GUIDED, "mpi_pset_name", "mpi://WORLD");
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED took a process set name");

    /* the machine's kinds: "true" where this process is inside one domain */
    MPI_Info hw;
    MPI_CHECK(MPI_Get_hw_resource_info(&hw));
    int nkeys = 0;
    MPI_CHECK(MPI_Info_get_nkeys(hw, &nkeys));
    CHECK(info_says(hw, "hwloc://Machine", "true"), "hw info: no hwloc://Machine = true");
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    CHECK(info_says(hw, "hwloc://PU", CPU_COUNT(&set) == 1 ? "true" : "false"),
          "hw info: hwloc://PU does not say whether the rank is on one cpu (%d)",
          CPU_COUNT(&set));
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        MPI_CHECK(MPI_Info_get_nthkey(hw, i, key));
        CHECK(!strncmp(key, "hwloc://", 8), "hw info key %s", key);
        bool inside = info_says(hw, key, "true");
        CHECK(inside || info_says(hw, key, "false"), "hw info %s: not true or false", key);
        /* a rank inside one domain of the kind gets a communicator */
        c = split_key(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_hw_resource_type", key);
        CHECK((c != MPI_COMM_NULL) == inside, "RESOURCE_GUIDED %s: %s communicator", key,
              inside ? "no" : "a");
        if (c != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_CHECK(MPI_Info_free(&hw));

    /* an unguided split that cuts names its kind */
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    char kind[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, kind, &flag));
    CHECK((c != MPI_COMM_NULL) == (flag != 0), "HW_UNGUIDED: communicator %d, info key %d",
          c != MPI_COMM_NULL, flag);
    if (c != MPI_COMM_NULL) {
        /* the same kind, guided, gives the same group */
        MPI_Comm again = split_key(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_hw_resource_type", kind);
        int cmp = MPI_UNEQUAL;
        MPI_CHECK(MPI_Comm_compare(c, again, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "HW_UNGUIDED chose %s, whose guided split differs", kind);
        MPI_CHECK(MPI_Comm_free(&again));
        MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_CHECK(MPI_Info_free(&info));
}

static void test_names_info(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len, flag;
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world name '%s'", name);
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_SELF"), "self name '%s'", name);
    MPI_Comm d, d2;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_CHECK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new communicator has name '%s'", name);
    MPI_CHECK(MPI_Comm_set_name(d, "my communicator"));
    MPI_CHECK(MPI_Comm_get_name(d, name, &len));
    CHECK(!strcmp(name, "my communicator") && len == 15, "name '%s'", name);
    MPI_CHECK(MPI_Comm_test_inter(d, &flag));
    CHECK(!flag, "an intracommunicator says it is an intercommunicator");
    MPI_CHECK(MPI_Comm_free(&d));

    /* Hints: accepted, and since none is acted on, none is reported as
     * used (MPI-3.1 §6.4.4: get_info returns the hints actually used). */
    MPI_Info info, got;
    int nkeys = -1;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "proust_hint", "one"));
    MPI_CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d));
    MPI_CHECK(MPI_Comm_set_info(d, info));
    MPI_CHECK(MPI_Comm_set_info(d, MPI_INFO_NULL));
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Comm_get_info(d, &got));
    MPI_CHECK(MPI_Info_get_nkeys(got, &nkeys));
    CHECK(nkeys == 0, "get_info reports %d unused hints", nkeys);
    MPI_CHECK(MPI_Comm_set_info(d, got)); /* what get_info gives back is valid input */
    MPI_CHECK(MPI_Info_free(&got));
    MPI_CHECK(MPI_Comm_dup(d, &d2));
    ring(d2, 8);
    MPI_CHECK(MPI_Comm_free(&d2));
    MPI_CHECK(MPI_Comm_free(&d));
}

static void test_recycling(void)
{
    /* Many more communicators over time than context ids at once. */
    for (int i = 0; i < 300; i++) {
        MPI_Comm d;
        MPI_CHECK(MPI_Comm_dup(i % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, &d));
        if (i % 50 == 0)
            ring(d, 9);
        MPI_CHECK(MPI_Comm_free(&d));
    }
    /* Many alive at once, each still distinct. */
    enum { N = 40 };
    MPI_Comm c[N];
    for (int i = 0; i < N; i++)
        MPI_CHECK(MPI_Comm_split(i ? c[i - 1] : MPI_COMM_WORLD, 0, i % 2 ? -wrank : wrank, &c[i]));
    int out[N], in[N];
    MPI_Request req[N];
    int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
    for (int i = 0; i < N; i++) {
        out[i] = i * 64 + wrank;
        int dst = i % 2 == 0 ? right : wsize - 1 - right; /* rank of `right` in c[i] */
        MPI_CHECK(MPI_Isend(&out[i], 1, MPI_INT, dst, 0, c[i], &req[i]));
    }
    for (int i = N - 1; i >= 0; i--) {
        MPI_CHECK(MPI_Recv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 0, c[i], MPI_STATUS_IGNORE));
        CHECK(in[i] == i * 64 + left, "communicator %d of %d: got %d", i, N, in[i]);
    }
    MPI_CHECK(MPI_Waitall(N, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        MPI_CHECK(MPI_Comm_free(&c[i]));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 64, "at most 64 ranks");
    test_split();
    test_create();
    test_split_type();
    test_split_hw();
    test_split_resource();
    test_names_info();
    test_recycling();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
