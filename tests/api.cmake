# Behaviour tests of the public API (tests/api/*.c), each run under proustrun
# for the rail combinations, strategies and thresholds that matter. Names:
# api_<program>_<variant>. `ctest -R api_` runs them all.

set(API_DIR ${CMAKE_CURRENT_SOURCE_DIR}/api)

foreach(prog integrity ordering wildcard many alltoall pack threads sync errors peer_death)
  if(EXISTS ${API_DIR}/${prog}.c)
    proust_add_api_program(api_${prog} ${API_DIR}/${prog}.c)
    target_include_directories(api_${prog} PRIVATE ${API_DIR})
  endif()
endforeach()

# api_job(NAME NPROCS RAILS PROGRAM [ARGS...] [ENV...] [TIMEOUT] [LAUNCHER_ARGS])
# proust_add_job_test with the api_ prefix and a default 120 s timeout.
function(api_job)
  cmake_parse_arguments(A "" "NAME;NPROCS;RAILS;PROGRAM;TIMEOUT" "ARGS;ENV;LAUNCHER_ARGS" ${ARGN})
  if(NOT TARGET api_${A_PROGRAM})
    return()
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  proust_add_job_test(NAME api_${A_NAME} NPROCS ${A_NPROCS} RAILS ${A_RAILS}
                      PROGRAM api_${A_PROGRAM} ARGS ${A_ARGS} ENV ${A_ENV}
                      TIMEOUT ${A_TIMEOUT} LAUNCHER_ARGS ${A_LAUNCHER_ARGS})
endfunction()

# ---- 1. integrity: every size, unaligned, posted and unexpected -------------
foreach(strategy default aggreg)
  api_job(NAME integrity_self_${strategy} NPROCS 1 RAILS self PROGRAM integrity
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME integrity_shm_${strategy} NPROCS 2 RAILS self,shm PROGRAM integrity
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME integrity_tcp_${strategy} NPROCS 2 RAILS tcp PROGRAM integrity
          ENV PROUST_STRATEGY=${strategy})
endforeach()
# one process talking to itself through the shm and tcp rails
api_job(NAME integrity_shm_loopback NPROCS 1 RAILS shm PROGRAM integrity)
api_job(NAME integrity_tcp_loopback NPROCS 1 RAILS tcp PROGRAM integrity)
# 16 MiB once per inter-process rail
api_job(NAME integrity_shm_big NPROCS 2 RAILS self,shm PROGRAM integrity ARGS --big)
api_job(NAME integrity_tcp_big NPROCS 2 RAILS tcp PROGRAM integrity ARGS --big
        ENV PROUST_STRATEGY=aggreg)
# rendezvous from 1 KiB on
api_job(NAME integrity_self_rdv1k NPROCS 1 RAILS self PROGRAM integrity
        ENV PROUST_RDV_THRESHOLD=1K)
api_job(NAME integrity_shm_rdv1k NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_RDV_THRESHOLD=1K)
api_job(NAME integrity_shm_rdv1k_aggreg NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_RDV_THRESHOLD=1K PROUST_STRATEGY=aggreg)
api_job(NAME integrity_tcp_rdv1k NPROCS 2 RAILS tcp PROGRAM integrity
        ENV PROUST_RDV_THRESHOLD=1K)
# shm rendezvous through the ring only (no process_vm_readv)
api_job(NAME integrity_shm_noget NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_SHM_GET_THRESHOLD=1G)
# the smallest ring: it wraps all the time, puts are fragmented
api_job(NAME integrity_shm_ring16k NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_SHM_RING_SIZE=16K)
api_job(NAME integrity_shm_ring16k_noget_aggreg NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_SHM_RING_SIZE=16K PROUST_SHM_GET_THRESHOLD=1G PROUST_STRATEGY=aggreg)
api_job(NAME integrity_shm_ring16k_rdv1k NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_SHM_RING_SIZE=16K PROUST_RDV_THRESHOLD=1K)

# ---- 2. ordering: non-overtaking, match by tag, any-tag in send order --------
foreach(strategy default aggreg)
  api_job(NAME ordering_self_${strategy} NPROCS 1 RAILS self PROGRAM ordering
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME ordering_shm_${strategy} NPROCS 2 RAILS self,shm PROGRAM ordering
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME ordering_tcp_${strategy} NPROCS 2 RAILS tcp PROGRAM ordering
          ENV PROUST_STRATEGY=${strategy})
endforeach()
api_job(NAME ordering_shm_ring16k_rdv1k NPROCS 2 RAILS self,shm PROGRAM ordering
        ENV PROUST_SHM_RING_SIZE=16K PROUST_RDV_THRESHOLD=1K)
api_job(NAME ordering_tcp_rdv1k_aggreg NPROCS 2 RAILS tcp PROGRAM ordering
        ENV PROUST_RDV_THRESHOLD=1K PROUST_STRATEGY=aggreg)

# ---- 3. wildcards: ANY_SOURCE, tag masks, posting order ----------------------
foreach(strategy default aggreg)
  api_job(NAME wildcard_shm_4_${strategy} NPROCS 4 RAILS self,shm PROGRAM wildcard
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME wildcard_tcp_4_${strategy} NPROCS 4 RAILS tcp PROGRAM wildcard
          ENV PROUST_STRATEGY=${strategy})
endforeach()
api_job(NAME wildcard_all_3 NPROCS 3 RAILS self,shm,tcp PROGRAM wildcard)
api_job(NAME wildcard_shm_8 NPROCS 8 RAILS self,shm PROGRAM wildcard)

# ---- 4. many outstanding requests; testsome / waitany loops ------------------
foreach(strategy default aggreg)
  api_job(NAME many_self_${strategy} NPROCS 1 RAILS self PROGRAM many
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME many_shm_${strategy} NPROCS 2 RAILS self,shm PROGRAM many
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME many_tcp_${strategy} NPROCS 2 RAILS tcp PROGRAM many
          ENV PROUST_STRATEGY=${strategy})
endforeach()

# ---- 5. scale: all-to-all with 2, 3, 4 and 8 processes ----------------------
foreach(strategy default aggreg)
  api_job(NAME alltoall_shm_2_${strategy} NPROCS 2 RAILS self,shm PROGRAM alltoall
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME alltoall_tcp_2_${strategy} NPROCS 2 RAILS tcp PROGRAM alltoall
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME alltoall_shm_4_${strategy} NPROCS 4 RAILS self,shm PROGRAM alltoall
          ENV PROUST_STRATEGY=${strategy})
endforeach()
api_job(NAME alltoall_all_3 NPROCS 3 RAILS self,shm,tcp PROGRAM alltoall)
api_job(NAME alltoall_selftcp_3_aggreg NPROCS 3 RAILS self,tcp PROGRAM alltoall
        ENV PROUST_STRATEGY=aggreg)
api_job(NAME alltoall_tcp_4 NPROCS 4 RAILS tcp PROGRAM alltoall)
api_job(NAME alltoall_shm_8 NPROCS 8 RAILS self,shm PROGRAM alltoall
        ARGS --sizes=0,100,5000,40000 --rounds=1)
api_job(NAME alltoall_tcp_8_aggreg NPROCS 8 RAILS tcp PROGRAM alltoall
        ARGS --sizes=0,100,5000,70000 --rounds=1 ENV PROUST_STRATEGY=aggreg)
api_job(NAME alltoall_shm_8_ring16k NPROCS 8 RAILS self,shm PROGRAM alltoall
        ARGS --sizes=1,3000,20000 --rounds=1 ENV PROUST_SHM_RING_SIZE=16K)

# ---- 6. packs: multi-segment messages, hints, truncation, API errors --------
foreach(strategy default aggreg)
  api_job(NAME pack_self_${strategy} NPROCS 1 RAILS self PROGRAM pack
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME pack_shm_${strategy} NPROCS 2 RAILS self,shm PROGRAM pack
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME pack_tcp_${strategy} NPROCS 2 RAILS tcp PROGRAM pack
          ENV PROUST_STRATEGY=${strategy})
endforeach()
api_job(NAME pack_shm_ring16k_noget NPROCS 2 RAILS self,shm PROGRAM pack
        ENV PROUST_SHM_RING_SIZE=16K PROUST_SHM_GET_THRESHOLD=1G PROUST_STRATEGY=aggreg)
api_job(NAME pack_tcp_rdv1k NPROCS 2 RAILS tcp PROGRAM pack ENV PROUST_RDV_THRESHOLD=1K)

# ---- 7. threads: 4 threads per process, own tags and one shared tag ----------
foreach(strategy default aggreg)
  api_job(NAME threads_shm_${strategy} NPROCS 2 RAILS self,shm PROGRAM threads
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME threads_tcp_${strategy} NPROCS 2 RAILS tcp PROGRAM threads
          ENV PROUST_STRATEGY=${strategy})
endforeach()
api_job(NAME threads_self NPROCS 1 RAILS self PROGRAM threads)
api_job(NAME threads_shm_ring16k_noget NPROCS 2 RAILS self,shm PROGRAM threads
        ENV PROUST_SHM_RING_SIZE=16K PROUST_SHM_GET_THRESHOLD=1G)

# ---- 8. ssend, probe, cancel, request and session monitors ------------------
foreach(strategy default aggreg)
  api_job(NAME sync_shm_${strategy} NPROCS 2 RAILS self,shm PROGRAM sync
          ENV PROUST_STRATEGY=${strategy})
  api_job(NAME sync_tcp_${strategy} NPROCS 2 RAILS tcp PROGRAM sync
          ENV PROUST_STRATEGY=${strategy})
endforeach()
api_job(NAME sync_shm_noget NPROCS 2 RAILS self,shm PROGRAM sync
        ENV PROUST_SHM_GET_THRESHOLD=1G)
