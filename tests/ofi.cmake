# The ofi rail (libfabric), label `ofi`: the api and mpi suites' programs
# over PROUST_RAILS=self,ofi on this host (the provider auto picks: here
# tcp;ofi_rxm), a rail that cannot open giving way to the next, and the
# message header's parser under random bytes (unit_ofi_wire).

# ofi_api(NAME n NPROCS k PROGRAM p [ARGS ...] [ENV ...]): api_<n>_ofi
function(ofi_api)
  cmake_parse_arguments(O "" "NAME;NPROCS;PROGRAM" "ARGS;ENV" ${ARGN})
  api_job(NAME ${O_NAME}_ofi NPROCS ${O_NPROCS} RAILS self,ofi PROGRAM ${O_PROGRAM}
          ARGS ${O_ARGS} ENV ${O_ENV})
  if(TEST api_${O_NAME}_ofi)
    set_tests_properties(api_${O_NAME}_ofi PROPERTIES LABELS ofi)
  endif()
endfunction()

ofi_api(NAME integrity_2 NPROCS 2 PROGRAM integrity)
ofi_api(NAME integrity_rdv1k_2 NPROCS 2 PROGRAM integrity ENV PROUST_RDV_THRESHOLD=1K)
ofi_api(NAME integrity_aggreg_2 NPROCS 2 PROGRAM integrity ENV PROUST_STRATEGY=aggreg)
# every rendezvous piece read by the receiver (odd sizes, odd offsets), or none
ofi_api(NAME integrity_read_all_2 NPROCS 2 PROGRAM integrity
        ENV PROUST_RDV_THRESHOLD=1K PROUST_OFI_READ_MIN=1)
ofi_api(NAME integrity_read_off_2 NPROCS 2 PROGRAM integrity ENV PROUST_OFI_READ_MIN=off)
ofi_api(NAME rdv_window_read_all_2 NPROCS 2 PROGRAM rdv_window ENV PROUST_OFI_READ_MIN=1)
# split_balance: rendezvous data split between ofi and tcp (either one the
# peer's own rail), odd sizes, landing in place
foreach(rails self,ofi,tcp self,tcp,ofi)
  string(REPLACE "," "" rname ${rails})
  api_job(NAME integrity_split_${rname} NPROCS 2 RAILS ${rails} PROGRAM integrity
          ENV PROUST_STRATEGY=split_balance PROUST_RDV_THRESHOLD=1K)
  api_job(NAME rdv_window_split_${rname} NPROCS 2 RAILS ${rails} PROGRAM rdv_window
          ENV PROUST_STRATEGY=split_balance)
  api_cases(PROGRAM ordering VARIANT split_${rname} NPROCS 2 RAILS ${rails}
            CASES same_tag ENV PROUST_STRATEGY=split_balance PROUST_RDV_THRESHOLD=1K)
  set_tests_properties(api_integrity_split_${rname} api_rdv_window_split_${rname}
                       api_ordering_same_tag_split_${rname} PROPERTIES LABELS ofi)
endforeach()
# slot rings (PROUST_OFI_RING=on: off by default over tcp): asked for at
# the first message; a ring of 4 slots, so credits run out and come back
# (flood: 10000 small messages to a receiver that posts nothing for a
# second); one ring a process at most, the other peers refused
set(_ring ENV PROUST_OFI_RING=on PROUST_OFI_RING_AFTER=0)
ofi_api(NAME integrity_ring_2 NPROCS 2 PROGRAM integrity ${_ring} PROUST_LOG_LEVEL=info)
if(TEST api_integrity_ring_2_ofi)
  set_tests_properties(api_integrity_ring_2_ofi PROPERTIES
    PASS_REGULAR_EXPRESSION "slot rings carried [1-9][0-9]* messages out"
    FAIL_REGULAR_EXPRESSION "FAIL")
endif()
foreach(c ${_ordering_cases})
  ofi_api(NAME ordering_${c}_ring4_2 NPROCS 2 PROGRAM ordering ARGS ${c}
          ${_ring} PROUST_OFI_RING_SLOTS=4)
endforeach()
foreach(c ${_many_cases})
  ofi_api(NAME many_${c}_ring_2 NPROCS 2 PROGRAM many ARGS ${c} ${_ring})
endforeach()
foreach(c ${_threads_cases})
  ofi_api(NAME threads_${c}_ring_2 NPROCS 2 PROGRAM threads ARGS ${c} ${_ring})
endforeach()
foreach(c ${_wildcard_cases})
  ofi_api(NAME wildcard_${c}_ring1_4 NPROCS 4 PROGRAM wildcard ARGS ${c}
          ${_ring} PROUST_OFI_RING_PEERS=1)
endforeach()
ofi_api(NAME alltoall_ring1_8 NPROCS 8 PROGRAM alltoall ${_ring} PROUST_OFI_RING_PEERS=1
        PROUST_OFI_RING_SLOTS=8)

# one process through its own endpoint (no self rail)
api_job(NAME integrity_loopback_ofi NPROCS 1 RAILS ofi PROGRAM integrity)
# every case of a program with a case table: api_<p>_<case>_<n>_ofi
function(ofi_cases prog nprocs)
  foreach(c ${ARGN})
    ofi_api(NAME ${prog}_${c}_${nprocs} NPROCS ${nprocs} PROGRAM ${prog} ARGS ${c})
  endforeach()
endfunction()
ofi_cases(ordering 2 ${_ordering_cases})
ofi_cases(wildcard 4 ${_wildcard_cases})
ofi_cases(many 2 ${_many_cases})
ofi_cases(threads 2 ${_threads_cases})
ofi_cases(cancel 2 ${_cancel_cases})
ofi_cases(pack 2 ${_pack_cases})
# memory freed and obtained again at the same address: read, registered
# per put (and every piece read, small ones too)
ofi_cases(reuse 2 ${_reuse_cases})
foreach(c ${_reuse_cases})
  ofi_api(NAME reuse_${c}_read_all_2 NPROCS 2 PROGRAM reuse ARGS ${c}
          ENV PROUST_OFI_READ_MIN=1 PROUST_RDV_THRESHOLD=1K)
endforeach()
# one-sided access: data both ways at 2 and 3 ranks, and bad keys
api_cases(PROGRAM rma VARIANT 2_ofi NPROCS 2 RAILS self,ofi CASES data errors)
api_cases(PROGRAM rma VARIANT 3_ofi NPROCS 3 RAILS self,ofi CASES data)
# transfers in pieces of 64 KiB + 3 (odd): one request for all of them
api_cases(PROGRAM rma VARIANT pieces_2_ofi NPROCS 2 RAILS self,ofi CASES data
          ENV PROUST_OFI_RMA_MAX=65539)
api_cases(PROGRAM rma VARIANT 2_ofi NPROCS 2 RAILS self,ofi CASES target_dies
          LAUNCHER_ARGS --grace 10 TIMEOUT 60)
foreach(t rma_data_2_ofi rma_errors_2_ofi rma_data_3_ofi rma_target_dies_2_ofi
          rma_data_pieces_2_ofi)
  if(TEST api_${t})
    set_tests_properties(api_${t} PROPERTIES LABELS ofi)
  endif()
endforeach()
if(TEST api_rma_target_dies_2_ofi)
  set_tests_properties(api_rma_target_dies_2_ofi PROPERTIES
    PASS_REGULAR_EXPRESSION "survivor got PROUST_ERR_(PEER_FAILED|CONN) after [0-9.]+ s.*survivor exiting cleanly"
    FAIL_REGULAR_EXPRESSION "\\] FAIL ")
endif()
api_cases_check(rma)
# atomics: every rank (itself included) on one counter, every operation and
# type the provider offers, bad arguments. On one host with shm first the
# ofi rail carries nobody and is not polled: no atomics (none_shm_ofi);
# the test cluster's jobs (mpi_cluster_*_ofi_rma*) mix shm and ofi peers.
api_cases(PROGRAM rma_atomic VARIANT 2_ofi NPROCS 2 RAILS self,ofi CASES count ops errors)
api_cases(PROGRAM rma_atomic VARIANT 3_ofi NPROCS 3 RAILS self,ofi CASES count ops)
api_cases(PROGRAM rma_atomic VARIANT shm_ofi NPROCS 2 RAILS self,shm,ofi CASES none)
foreach(t count_2_ofi ops_2_ofi errors_2_ofi count_3_ofi ops_3_ofi none_shm_ofi)
  if(TEST api_rma_atomic_${t})
    set_tests_properties(api_rma_atomic_${t} PROPERTIES LABELS ofi)
  endif()
endforeach()
api_cases_check(rma_atomic)
ofi_api(NAME alltoall_4 NPROCS 4 PROGRAM alltoall)
ofi_api(NAME alltoall_8 NPROCS 8 PROGRAM alltoall)
ofi_api(NAME match_threads_3 NPROCS 3 PROGRAM match_threads)
ofi_api(NAME rdv_window_2 NPROCS 2 PROGRAM rdv_window)
# what a peer still receives after the sender entered finalize: the rail
# moves it only while polled (the final fence polls)
foreach(mode poll block thread)
  ofi_api(NAME finalize_${mode}_2 NPROCS 2 PROGRAM finalize ENV PROUST_PROGRESS=${mode})
endforeach()

# no such provider: a warning, and the next rail carries everything
api_job(NAME integrity_ofi_missing_provider NPROCS 2 RAILS self,ofi,tcp PROGRAM integrity
        ENV PROUST_OFI_PROVIDER=no_such_provider)
if(TEST api_integrity_ofi_missing_provider)
  set_tests_properties(api_integrity_ofi_missing_provider PROPERTIES LABELS ofi
    PASS_REGULAR_EXPRESSION "rail to peer 1: tcp.*all sizes ok"
    FAIL_REGULAR_EXPRESSION "FAIL")
endif()

# Proust MPI over ofi
foreach(job p2p_data:2 p2p_data:3 p2p_order:2 p2p_wild:2 p2p_ring:3 p2p_persist:2
            p2p_mprobe:2 p2p_threads:2 p2p_idle_pull:2)
  string(REPLACE ":" ";" parts ${job})
  list(GET parts 0 prog)
  list(GET parts 1 n)
  if(TARGET mpi_${prog})
    mpi_job(NAME ${prog}_${n}_ofi NPROCS ${n} RAILS self,ofi PROGRAM mpi_${prog})
    set_tests_properties(mpi_${prog}_${n}_ofi PROPERTIES LABELS ofi)
  endif()
endforeach()
foreach(job p2p_data:3 p2p_wild:2 p2p_threads:2)
  string(REPLACE ":" ";" parts ${job})
  list(GET parts 0 prog)
  list(GET parts 1 n)
  if(TARGET mpi_${prog})
    mpi_job(NAME ${prog}_ring_${n}_ofi NPROCS ${n} RAILS self,ofi PROGRAM mpi_${prog}
            ENV PROUST_OFI_RING=on PROUST_OFI_RING_AFTER=4)
    set_tests_properties(mpi_${prog}_ring_${n}_ofi PROPERTIES LABELS ofi)
  endif()
endforeach()

# the registration cache of MPI_Alloc_mem memory: sends from it are read
# without a registration each; freed, it is never served again
mpi_test_program(mpi_mem_cache ${MPI_TEST_DIR}/mem_cache.c)
mpi_job(NAME mem_cache_2_ofi NPROCS 2 RAILS self,ofi PROGRAM mpi_mem_cache ARGS --expect-hits)
mpi_job(NAME mem_cache_get_2_ofi NPROCS 2 RAILS self,ofi PROGRAM mpi_mem_cache ARGS --expect-hits
        ENV PROUST_OFI_READ_MIN=1)
mpi_job(NAME mem_cache_2_tcp NPROCS 2 RAILS tcp PROGRAM mpi_mem_cache)
set_tests_properties(mpi_mem_cache_2_ofi mpi_mem_cache_get_2_ofi PROPERTIES LABELS ofi)

# MPI one-sided over ofi: windows not in shared memory (PROUST_RMA_SHM=off)
# whose puts and gets are remote writes and reads, and accumulates of
# integers and doubles the NIC's atomics, and locks taken on lock words by
# those atomics (rma_data, rma_acc and rma_sync check that they were); the
# other synchronisation as messages beside them
foreach(job rma_data:2 rma_data:3 rma_acc:2 rma_acc:3 rma_sync:2 rma_sync:3 rma_threads:2
            rma_large:2 rma_errors:2)
  string(REPLACE ":" ";" parts ${job})
  list(GET parts 0 prog)
  list(GET parts 1 n)
  if(TARGET mpi_${prog})
    set(args)
    if(prog STREQUAL "rma_data" OR prog STREQUAL "rma_acc" OR prog STREQUAL "rma_sync")
      set(args --expect-nic)
    endif()
    mpi_job(NAME ${prog}_${n}_ofi NPROCS ${n} RAILS self,ofi PROGRAM mpi_${prog} ARGS ${args}
            ENV PROUST_RMA_SHM=off PROUST_RMA_NIC=on TIMEOUT 120)
    set_tests_properties(mpi_${prog}_${n}_ofi PROPERTIES LABELS ofi)
  endif()
endforeach()
# the default (auto: one-sided for 64 KiB - 1 MiB over tcp), and the same
# puts and gets as messages (off)
mpi_job(NAME rma_data_auto_2_ofi NPROCS 2 RAILS self,ofi PROGRAM mpi_rma_data
        ARGS --expect-nic ENV PROUST_RMA_SHM=off TIMEOUT 120)
mpi_job(NAME rma_data_msgs_2_ofi NPROCS 2 RAILS self,ofi PROGRAM mpi_rma_data
        ENV PROUST_RMA_SHM=off PROUST_RMA_NIC=off TIMEOUT 120)

proust_add_unit_test(unit_ofi_wire unit/ofi_wire_test.c)
set_tests_properties(unit_ofi_wire PROPERTIES LABELS ofi)
