# Stress family (issue 38): many-to-many traffic under MPI_THREAD_MULTIPLE,
# every message checked (stress_traffic.c), across rails, progress modes,
# locking modes and stripe counts, 1-8 ranks x 1-4 threads, a new seed per
# run (printed). A hang prints the stack of every thread of every rank
# (stress_run.sh). Jobs: mpi_stress_<ranks>x<threads>_<rails>_<variant>,
# label "stress"; the soak (>= 10^5 messages) has label "soak" and runs
# with `make soak`, not `make test`.
mpi_test_program(mpi_stress_traffic ${MPI_TEST_DIR}/stress_traffic.c)
set(STRESS_RUN ${MPI_TEST_DIR}/stress_run.sh)

# stress_job(RANKS k THREADS t ROUNDS r RAILS rails VARIANT name [PATTERN p]
#            [MAX bytes] [LIMIT s] [LABEL l] [ENV v...])
function(stress_job)
  cmake_parse_arguments(S "" "RANKS;THREADS;ROUNDS;RAILS;VARIANT;PATTERN;MAX;LIMIT;LABEL" "ENV"
                        ${ARGN})
  if(NOT S_PATTERN)
    set(S_PATTERN safe)
  endif()
  if(NOT S_MAX)
    set(S_MAX 1048579)
  endif()
  if(NOT S_LIMIT)
    set(S_LIMIT 120)
  endif()
  if(NOT S_LABEL)
    set(S_LABEL stress)
  endif()
  string(REPLACE "," "" rails_name ${S_RAILS})
  set(name mpi_stress_${S_RANKS}x${S_THREADS}_${rails_name}_${S_VARIANT})
  add_test(NAME ${name}
           COMMAND bash ${STRESS_RUN} ${PROUSTRUN} ${S_RANKS} ${S_LIMIT}
                   $<TARGET_FILE:mpi_stress_traffic> -t ${S_THREADS} -r ${S_ROUNDS}
                   -m ${S_MAX} -p ${S_PATTERN})
  math(EXPR ctest_limit "${S_LIMIT} + 120")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ctest_limit} LABELS ${S_LABEL}
                       ENVIRONMENT "PROUST_RAILS=${S_RAILS};${S_ENV}")
endfunction()

# shared memory, every progress and locking mode, one and all stripes
stress_job(RANKS 2 THREADS 4 ROUNDS 150 RAILS self,shm VARIANT auto)
stress_job(RANKS 3 THREADS 3 ROUNDS 80 RAILS self,shm VARIANT thread ENV PROUST_PROGRESS=thread)
stress_job(RANKS 4 THREADS 2 ROUNDS 100 RAILS self,shm VARIANT block ENV PROUST_PROGRESS=block)
stress_job(RANKS 4 THREADS 1 ROUNDS 150 RAILS self,shm VARIANT poll ENV PROUST_PROGRESS=poll)
stress_job(RANKS 4 THREADS 2 ROUNDS 100 RAILS self,shm VARIANT coarse ENV PROUST_LOCKING=coarse)
stress_job(RANKS 4 THREADS 2 ROUNDS 100 RAILS self,shm VARIANT stripes1
           ENV PROUST_MATCH_STRIPES=1)
stress_job(RANKS 5 THREADS 2 ROUNDS 50 RAILS self,shm VARIANT block_coarse_stripes1
           ENV PROUST_PROGRESS=block PROUST_LOCKING=coarse PROUST_MATCH_STRIPES=1)
stress_job(RANKS 8 THREADS 1 ROUNDS 50 RAILS self,shm VARIANT auto)
stress_job(RANKS 8 THREADS 4 ROUNDS 15 RAILS self,shm VARIANT auto MAX 262147)
# the safe pattern needs no buffering: the same without idle pulls
stress_job(RANKS 4 THREADS 2 ROUNDS 100 RAILS self,shm VARIANT nopull
           ENV PROUST_IDLE_PULL_BYTES=0)
# the pattern of issue 38 (relies on buffering: Isend, ANY_SOURCE Recv, Waitall)
stress_job(RANKS 4 THREADS 1 ROUNDS 400 RAILS self,shm VARIANT buffered PATTERN buffered)
stress_job(RANKS 4 THREADS 2 ROUNDS 150 RAILS self,shm VARIANT buffered_block PATTERN buffered
           ENV PROUST_PROGRESS=block)
stress_job(RANKS 4 THREADS 2 ROUNDS 150 RAILS self,shm VARIANT buffered_poll PATTERN buffered
           ENV PROUST_PROGRESS=poll)
stress_job(RANKS 8 THREADS 4 ROUNDS 80 RAILS self,shm VARIANT buffered PATTERN buffered
           MAX 262147)
# tcp (the buffered pattern too: an idle receiver asks for the data with a CTS)
stress_job(RANKS 4 THREADS 2 ROUNDS 60 RAILS self,tcp VARIANT buffered PATTERN buffered
           MAX 262147)
stress_job(RANKS 8 THREADS 4 ROUNDS 30 RAILS self,tcp VARIANT buffered_block PATTERN buffered
           MAX 262147 ENV PROUST_PROGRESS=block)
stress_job(RANKS 2 THREADS 2 ROUNDS 40 RAILS self,tcp VARIANT auto)
stress_job(RANKS 4 THREADS 2 ROUNDS 15 RAILS self,tcp VARIANT block ENV PROUST_PROGRESS=block)
stress_job(RANKS 3 THREADS 1 ROUNDS 30 RAILS self,tcp VARIANT poll ENV PROUST_PROGRESS=poll)
stress_job(RANKS 4 THREADS 2 ROUNDS 15 RAILS self,tcp VARIANT thread ENV PROUST_PROGRESS=thread)
stress_job(RANKS 3 THREADS 2 ROUNDS 20 RAILS self,tcp VARIANT coarse_stripes1
           ENV PROUST_LOCKING=coarse PROUST_MATCH_STRIPES=1)
# ofi (tcp;ofi_rxm here): completions from whichever thread polls, pieces
# of 256 KiB and more read by the receiver
stress_job(RANKS 3 THREADS 2 ROUNDS 30 RAILS self,ofi VARIANT auto)
stress_job(RANKS 4 THREADS 2 ROUNDS 30 RAILS self,ofi VARIANT buffered PATTERN buffered)
stress_job(RANKS 2 THREADS 3 ROUNDS 30 RAILS self,ofi VARIANT read_all ENV PROUST_OFI_READ_MIN=1)
set_property(TEST mpi_stress_3x2_selfofi_auto mpi_stress_4x2_selfofi_buffered
             mpi_stress_2x3_selfofi_read_all APPEND PROPERTY LABELS ofi)
# one process: the self rail alone
stress_job(RANKS 1 THREADS 4 ROUNDS 100 RAILS self VARIANT auto)
stress_job(RANKS 1 THREADS 2 ROUNDS 100 RAILS self VARIANT poll ENV PROUST_PROGRESS=poll)
stress_job(RANKS 1 THREADS 3 ROUNDS 100 RAILS self VARIANT buffered PATTERN buffered)

# the soak: 8 ranks x 4 threads x 400 rounds = 102 400 messages a job
stress_job(RANKS 8 THREADS 4 ROUNDS 400 RAILS self,shm VARIANT soak LABEL soak LIMIT 1200)
stress_job(RANKS 8 THREADS 4 ROUNDS 400 RAILS self,shm VARIANT soak_buffered PATTERN buffered
           LABEL soak LIMIT 1200)
stress_job(RANKS 8 THREADS 4 ROUNDS 400 RAILS self,tcp VARIANT soak LABEL soak LIMIT 1200)
stress_job(RANKS 8 THREADS 4 ROUNDS 400 RAILS self,tcp VARIANT soak_buffered PATTERN buffered
           LABEL soak LIMIT 1200)
