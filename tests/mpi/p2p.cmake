# Point-to-point conformance tests: tests/mpi/p2p_*.c, jobs named
# mpi_p2p_<program>_<ranks>_<rail>.

# p2p_jobs(program SHM n... TCP n... [ARGS a...] [BIG_ARGS a...] [TIMEOUT s])
# One job per rank count on each rail; jobs of more than 4 ranks get
# BIG_ARGS instead of ARGS when given (smaller problems on 2 cores).
function(p2p_jobs prog)
  cmake_parse_arguments(P "" "TIMEOUT" "SHM;TCP;ARGS;BIG_ARGS" ${ARGN})
  if(NOT P_TIMEOUT)
    set(P_TIMEOUT 120)
  endif()
  foreach(rail shm tcp)
    if(rail STREQUAL "shm")
      set(counts ${P_SHM})
      set(rails self,shm)
    else()
      set(counts ${P_TCP})
      set(rails tcp)
    endif()
    foreach(n ${counts})
      set(args ${P_ARGS})
      if(n GREATER 4 AND P_BIG_ARGS)
        set(args ${P_BIG_ARGS})
      endif()
      mpi_job(NAME ${prog}_${n}_${rail} NPROCS ${n} RAILS ${rails} PROGRAM mpi_${prog}
              ARGS ${args} TIMEOUT ${P_TIMEOUT})
    endforeach()
  endforeach()
endfunction()

foreach(prog p2p_data p2p_order p2p_wild p2p_ring p2p_persist p2p_mprobe p2p_req p2p_err
        p2p_threads p2p_bsend p2p_bsend_scopes p2p_abort p2p_greq p2p_test_soon p2p_isendrecv p2p_cancel
        p2p_large p2p_part p2p_idle_pull)
  if(EXISTS ${MPI_TEST_DIR}/${prog}.c)
    mpi_test_program(mpi_${prog} ${MPI_TEST_DIR}/${prog}.c)
  endif()
endforeach()

if(TARGET mpi_p2p_data)
  p2p_jobs(p2p_data SHM 1 2 3 8 TCP 2 3 8 BIG_ARGS 1048577)
endif()
if(TARGET mpi_p2p_order)
  p2p_jobs(p2p_order SHM 1 2 4 8 TCP 2 5 8)
endif()
if(TARGET mpi_p2p_wild)
  p2p_jobs(p2p_wild SHM 1 2 3 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_ring)
  p2p_jobs(p2p_ring SHM 1 2 5 8 TCP 3 8)
endif()
if(TARGET mpi_p2p_persist)
  p2p_jobs(p2p_persist SHM 1 2 3 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_part)
  p2p_jobs(p2p_part SHM 1 2 3 TCP 2 3)
endif()
if(TARGET mpi_p2p_idle_pull)
  p2p_jobs(p2p_idle_pull SHM 1 2 3 TCP 2 3 TIMEOUT 60)
endif()
if(TARGET mpi_p2p_mprobe)
  p2p_jobs(p2p_mprobe SHM 1 2 4 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_req)
  p2p_jobs(p2p_req SHM 1 2 3 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_err)
  p2p_jobs(p2p_err SHM 1 2 3 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_threads)
  p2p_jobs(p2p_threads SHM 1 2 4 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_bsend)
  p2p_jobs(p2p_bsend SHM 1 2 3 8 TCP 2 8)
endif()
if(TARGET mpi_p2p_bsend_scopes)
  p2p_jobs(p2p_bsend_scopes SHM 1 2 3 TCP 2 3)
endif()
# Generalized requests: the callbacks' error codes (one rank is enough).
mpi_job(NAME p2p_greq_1 NPROCS 1 RAILS self,shm PROGRAM mpi_p2p_greq TIMEOUT 60)
# A test soon after the event sees it, beside a progress thread (forced on
# one rank; two ranks get what auto picks: a thread where cores are free).
mpi_job(NAME p2p_test_soon_1 NPROCS 1 RAILS self,shm PROGRAM mpi_p2p_test_soon
        ENV PROUST_PROGRESS=thread TIMEOUT 120)
mpi_job(NAME p2p_test_soon_2 NPROCS 2 RAILS self,shm PROGRAM mpi_p2p_test_soon TIMEOUT 120)

# MPI_Abort from one rank stops the whole job, proustrun exiting with the
# code given (p2p_abort.sh checks the status and that no rank hung).
if(TARGET mpi_p2p_abort)
  foreach(rail shm tcp)
    if(rail STREQUAL "shm")
      set(rails self,shm)
    else()
      set(rails tcp)
    endif()
    foreach(n 1 3 8)
      add_test(NAME mpi_p2p_abort_${n}_${rail}
               COMMAND sh ${MPI_TEST_DIR}/p2p_abort.sh ${PROUSTRUN} ${n}
                       $<TARGET_FILE:mpi_p2p_abort>)
      set_tests_properties(mpi_p2p_abort_${n}_${rail} PROPERTIES TIMEOUT 60
                           ENVIRONMENT "PROUST_RAILS=${rails}")
    endforeach()
  endforeach()
endif()

if(TARGET mpi_p2p_isendrecv)
  p2p_jobs(p2p_isendrecv SHM 1 2 3 TCP 2 3)
endif()
if(TARGET mpi_p2p_cancel)
  p2p_jobs(p2p_cancel SHM 2 3 TCP 2)
endif()
# MPI-4.0 large counts (MPI_*_c); the `big` job moves one message of more
# than INT_MAX bytes (skipped where free memory is short).
if(TARGET mpi_p2p_large)
  p2p_jobs(p2p_large SHM 1 2 3 TCP 2)
  mpi_job(NAME p2p_large_big_2_shm NPROCS 2 RAILS self,shm PROGRAM mpi_p2p_large ARGS big
          TIMEOUT 300)
endif()

# strangers on a tcp rail's port during connection set-up: refused, never a
# rank, never told the job's secret (tcp.h, handshake)
add_test(NAME mpi_tcp_stranger
         COMMAND bash ${MPI_TEST_DIR}/tcp_stranger.sh $<TARGET_FILE:proustrun>
                 $<TARGET_FILE:mpi_cluster_where>)
set_tests_properties(mpi_tcp_stranger PROPERTIES TIMEOUT 90)

# the tcp rail connects on demand: 16 ranks talking to their ring
# neighbours open a few connections each, not 15 (tcp_lazy.c)
mpi_test_program(mpi_tcp_neighbours ${MPI_TEST_DIR}/tcp_neighbours.c)
add_test(NAME mpi_tcp_connections
         COMMAND bash ${MPI_TEST_DIR}/tcp_connections.sh $<TARGET_FILE:proustrun>
                 $<TARGET_FILE:mpi_tcp_neighbours> 16)
set_tests_properties(mpi_tcp_connections PROPERTIES TIMEOUT 240)
