/*
 * datatype_threads.c — datatype calls from several threads at once
 * (MPI_THREAD_MULTIPLE): each thread builds, commits, packs, decodes and
 * frees its own types while all of them dup, rename and decode types they
 * share, so handle-table reuse, reference counts and names are exercised
 * concurrently. Results are checked, and no type may be left at the end.
 */
#include <pthread.h>

#include "mpitest.h"

enum { THREADS = 4, ROUNDS = 150 };
static MPI_Datatype shared_struct, shared_vec;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        /* a private type, packed and checked */
        int n = 1 + (r + id) % 9;
        MPI_Datatype v, d, inner[2];
        MPI_CHECK(MPI_Type_vector(n, 2, 3, MPI_INT, &v));
        MPI_CHECK(MPI_Type_commit(&v));
        int src[27], out[18], pos = 0;
        for (int i = 0; i < 27; i++)
            src[i] = id * 1000 + r * 30 + i;
        MPI_CHECK(MPI_Pack(src, 1, v, out, sizeof out, &pos, MPI_COMM_SELF));
        CHECK(pos == n * 8, "thread %d: position %d", id, pos);
        for (int i = 0; i < n; i++)
            CHECK(out[2 * i] == src[3 * i] && out[2 * i + 1] == src[3 * i + 1],
                  "thread %d round %d: element %d", id, r, i);
        MPI_CHECK(MPI_Type_free(&v));

        /* shared types: dup, rename, decode */
        MPI_CHECK(MPI_Type_dup(shared_struct, &d));
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        snprintf(name, sizeof name, "dup %d.%d", id, r);
        MPI_CHECK(MPI_Type_set_name(d, name));
        MPI_CHECK(MPI_Type_set_name(shared_vec, id % 2 ? "odd" : "even"));
        MPI_CHECK(MPI_Type_get_name(shared_vec, name, &len));
        CHECK(strcmp(name, "odd") == 0 || strcmp(name, "even") == 0, "torn name '%s'", name);
        int I[3];
        MPI_Aint A[2];
        MPI_CHECK(MPI_Type_get_contents(shared_struct, 3, 2, 2, I, A, inner));
        CHECK(I[0] == 2 && inner[1] == MPI_DOUBLE, "thread %d: contents", id);
        int ni, na, nd, comb;
        MPI_CHECK(MPI_Type_get_envelope(inner[0], &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_VECTOR, "thread %d: inner combiner %d", id, comb);
        MPI_CHECK(MPI_Type_free(&inner[0]));
        MPI_Count size;
        MPI_CHECK(MPI_Type_size_x(d, &size));
        CHECK(size == 2 * 24 + 8, "thread %d: dup size %lld", id, size);
        MPI_CHECK(MPI_Type_free(&d));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &shared_vec));
    int bl[2] = {2, 1};
    MPI_Aint d[2] = {0, 200};
    MPI_Datatype ty[2] = {shared_vec, MPI_DOUBLE};
    MPI_CHECK(MPI_Type_create_struct(2, bl, d, ty, &shared_struct));
    MPI_CHECK(MPI_Type_commit(&shared_struct));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0, "pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    MPI_CHECK(MPI_Type_free(&shared_struct));
    MPI_CHECK(MPI_Type_free(&shared_vec));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
