# Behaviour tests of the public API (tests/api/*.c), each run under proustrun
# for the rail combinations, strategies and thresholds that matter. Names:
# api_<program>_<case>_<variant> for a program that checks several behaviours
# (a table of named cases, tests/api/test_cases.h: ordering, wildcard,
# match_many, many, pack, threads, offer, sync, cancel, errors, progress,
# ptask, reuse; see api_cases below); api_<program>_<variant> for one that checks one
# behaviour, over a sweep of sizes or rounds (integrity, alltoall,
# match_threads, rdv_window, stash, shm_resident, finalize, placement) or one
# per process already (peer_death's --mode). `ctest -R api_` runs them all.

set(API_DIR ${CMAKE_CURRENT_SOURCE_DIR}/api)

foreach(prog integrity ordering wildcard many alltoall pack threads sync errors peer_death finalize
             placement match_threads offer shm_resident cancel match_many reuse rma
             rma_atomic strategy_choice shm_ring_fail late_peer)
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

# api_cases(PROGRAM p [VARIANT v] NPROCS k RAILS r CASES c... [ARGS ...] [ENV ...]
#           [TIMEOUT s] [RUN_SERIAL])
# One test per case of a program with a case table (tests/api/test_cases.h):
# api_<p>_<case>_<v> (api_<p>_<case> without a variant) runs `p <case> ARGS`.
# api_cases_check(p) then adds api_<p>_cases: `p --list` and the cases
# registered here must be the same, so that no case goes unrun.
function(api_cases)
  cmake_parse_arguments(A "RUN_SERIAL" "PROGRAM;VARIANT;NPROCS;RAILS;TIMEOUT"
                        "CASES;ARGS;ENV;LAUNCHER_ARGS" ${ARGN})
  if(NOT TARGET api_${A_PROGRAM})
    return()
  endif()
  foreach(c ${A_CASES})
    set(name ${A_PROGRAM}_${c})
    if(NOT "${A_VARIANT}" STREQUAL "") # (if(A_VARIANT) is false for `off`)
      string(APPEND name _${A_VARIANT})
    endif()
    api_job(NAME ${name} NPROCS ${A_NPROCS} RAILS ${A_RAILS} PROGRAM ${A_PROGRAM}
            ARGS ${c} ${A_ARGS} ENV ${A_ENV} TIMEOUT ${A_TIMEOUT}
            LAUNCHER_ARGS ${A_LAUNCHER_ARGS})
    if(A_RUN_SERIAL)
      set_tests_properties(api_${name} PROPERTIES RUN_SERIAL TRUE)
    endif()
    set_property(GLOBAL APPEND PROPERTY API_CASES_${A_PROGRAM} ${c})
  endforeach()
endfunction()

function(api_cases_check prog)
  if(NOT TARGET api_${prog})
    return()
  endif()
  get_property(registered GLOBAL PROPERTY API_CASES_${prog})
  list(REMOVE_DUPLICATES registered)
  add_test(NAME api_${prog}_cases
           COMMAND sh -c [=[
listed=$("$0" --list) || exit 1
for c in "$@"; do
  printf '%s\n' "$listed" | grep -qx -- "$c" || { echo "registered, not in --list: $c"; exit 1; }
done
for c in $listed; do
  case " $* " in *" $c "*) ;; *) echo "in --list, no CTest runs it: $c"; exit 1 ;; esac
done
echo "$# cases, each registered"]=] $<TARGET_FILE:api_${prog}> ${registered})
  set_tests_properties(api_${prog}_cases PROPERTIES TIMEOUT 30)
endfunction()

# ---- 1. integrity: every size, unaligned, posted and unexpected -------------
foreach(strategy default aggreg coalesce)
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
# split_balance: rendezvous puts shared between shm (through its ring) and tcp
api_job(NAME integrity_split_shm_tcp NPROCS 2 RAILS self,shm,tcp PROGRAM integrity
        ENV PROUST_STRATEGY=split_balance PROUST_RDV_THRESHOLD=1K PROUST_SHM_GET_THRESHOLD=1G)
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
# One test per case of api_ordering (`api_ordering --help`):
# api_ordering_<case>_<variant>.
set(_ordering_cases same_tag tags_reversed any_tag flood)
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM ordering VARIANT self_${strategy} NPROCS 1 RAILS self
            CASES ${_ordering_cases} ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM ordering VARIANT shm_${strategy} NPROCS 2 RAILS self,shm
            CASES ${_ordering_cases} ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM ordering VARIANT tcp_${strategy} NPROCS 2 RAILS tcp
            CASES ${_ordering_cases} ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases(PROGRAM ordering VARIANT shm_ring16k_rdv1k NPROCS 2 RAILS self,shm
          CASES ${_ordering_cases} ENV PROUST_SHM_RING_SIZE=16K PROUST_RDV_THRESHOLD=1K)
api_cases(PROGRAM ordering VARIANT tcp_rdv1k_aggreg NPROCS 2 RAILS tcp
          CASES ${_ordering_cases} ENV PROUST_RDV_THRESHOLD=1K PROUST_STRATEGY=aggreg)

# many posted receives and unexpected messages of one peer, mixed masks
# (the gate's indexes: core/posted_queue.c, core/unexp_queue.c)
# One test per case of api_match_many (`api_match_many --help`):
# api_match_many_<case>_<variant>.
set(_match_many_cases posted unexpected)
api_cases(PROGRAM match_many VARIANT self NPROCS 1 RAILS self CASES ${_match_many_cases})
api_cases(PROGRAM match_many VARIANT shm NPROCS 2 RAILS self,shm CASES ${_match_many_cases})
api_cases(PROGRAM match_many VARIANT tcp_aggreg NPROCS 2 RAILS tcp CASES ${_match_many_cases}
          ENV PROUST_STRATEGY=aggreg)
api_cases_check(match_many)

# ---- 3. wildcards: ANY_SOURCE, tag masks, posting order ----------------------
# One test per case of api_wildcard (`api_wildcard --help`):
# api_wildcard_<case>_<variant>.
set(_wildcard_cases any_source tag_masks_unexpected tag_masks_posted posting_order)
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM wildcard VARIANT shm_4_${strategy} NPROCS 4 RAILS self,shm
            CASES ${_wildcard_cases} ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM wildcard VARIANT tcp_4_${strategy} NPROCS 4 RAILS tcp
            CASES ${_wildcard_cases} ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases(PROGRAM wildcard VARIANT all_3 NPROCS 3 RAILS self,shm,tcp CASES ${_wildcard_cases})
api_cases(PROGRAM wildcard VARIANT shm_8 NPROCS 8 RAILS self,shm CASES ${_wildcard_cases})
api_cases_check(wildcard)

# ---- 4. many outstanding requests; testsome / waitany loops ------------------
# One test per case of api_many (`api_many --help`): api_many_<case>_<variant>.
set(_many_cases outstanding testsome waitany test_and_null)
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM many VARIANT self_${strategy} NPROCS 1 RAILS self CASES ${_many_cases}
            ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM many VARIANT shm_${strategy} NPROCS 2 RAILS self,shm CASES ${_many_cases}
            ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM many VARIANT tcp_${strategy} NPROCS 2 RAILS tcp CASES ${_many_cases}
            ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases_check(many)

# ---- 5. scale: all-to-all with 2, 3, 4 and 8 processes ----------------------
foreach(strategy default aggreg coalesce)
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
# One test per case of api_pack (`api_pack --help`): api_pack_<case>_<variant>.
set(_pack_cases segments urgent_overtake truncation api_errors)
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM pack VARIANT self_${strategy} NPROCS 1 RAILS self CASES ${_pack_cases}
            ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM pack VARIANT shm_${strategy} NPROCS 2 RAILS self,shm CASES ${_pack_cases}
            ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM pack VARIANT tcp_${strategy} NPROCS 2 RAILS tcp CASES ${_pack_cases}
            ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases(PROGRAM pack VARIANT shm_ring16k_noget NPROCS 2 RAILS self,shm CASES ${_pack_cases}
          ENV PROUST_SHM_RING_SIZE=16K PROUST_SHM_GET_THRESHOLD=1G PROUST_STRATEGY=aggreg)
api_cases(PROGRAM pack VARIANT tcp_rdv1k NPROCS 2 RAILS tcp CASES ${_pack_cases}
          ENV PROUST_RDV_THRESHOLD=1K)

# ---- 7. threads: 4 threads per process, own tags and one shared tag ----------
# One test per case of api_threads (`api_threads --help`): api_threads_<case>_<variant>.
set(_threads_cases own_tags shared_tag)
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM threads VARIANT shm_${strategy} NPROCS 2 RAILS self,shm
            CASES ${_threads_cases} ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM threads VARIANT tcp_${strategy} NPROCS 2 RAILS tcp CASES ${_threads_cases}
            ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases(PROGRAM threads VARIANT self NPROCS 1 RAILS self CASES ${_threads_cases})
api_cases(PROGRAM threads VARIANT shm_ring16k_noget NPROCS 2 RAILS self,shm
          CASES ${_threads_cases} ENV PROUST_SHM_RING_SIZE=16K PROUST_SHM_GET_THRESHOLD=1G)

# ---- 7b. matching under concurrency: every rank to every rank, 4 threads each,
#      specific, ANY_SOURCE, masked and improbe channels; shared match stripes
api_job(NAME match_threads_shm_4 NPROCS 4 RAILS self,shm PROGRAM match_threads)
api_job(NAME match_threads_tcp_3 NPROCS 3 RAILS self,tcp PROGRAM match_threads)
api_job(NAME match_threads_shm_5_stripes2 NPROCS 5 RAILS self,shm PROGRAM match_threads
        ENV PROUST_MATCH_STRIPES=2)
api_job(NAME match_threads_shm_3_stripes1 NPROCS 3 RAILS self,shm PROGRAM match_threads
        ENV PROUST_MATCH_STRIPES=1)
api_job(NAME match_threads_shm_3_coarse NPROCS 3 RAILS self,shm PROGRAM match_threads
        ENV PROUST_LOCKING=coarse)
api_job(NAME match_threads_shm_3_block NPROCS 3 RAILS self,shm PROGRAM match_threads
        ENV PROUST_PROGRESS=block PROUST_SHM_RING_SIZE=16K PROUST_RDV_THRESHOLD=1K)

# ---- 7c. receiver offers: the sender writes into a posted nonblocking receive
# --pull: the receiver can pull a rendezvous itself (shm get), so it never
# waits for a computing sender
# One test per case of api_offer (`api_offer --help`): api_offer_<case>_<variant>.
set(_offer_cases recv_posted_first recv_while_rts_waits eager_first_same_tag truncation
    other_tags_between cancel_offered cancel_racing_send both_directions computing_sender
    cancel_no_wait no_copy_in_call offers_come_back)
api_cases(PROGRAM offer VARIANT shm NPROCS 2 RAILS self,shm CASES ${_offer_cases} ARGS --pull
          ENV PROUST_OFFER_BYTES=128K)
api_cases(PROGRAM offer VARIANT shm_all NPROCS 2 RAILS self,shm CASES ${_offer_cases} ARGS --pull
          ENV PROUST_OFFER_BYTES=1)
api_cases(PROGRAM offer VARIANT shm_thread NPROCS 2 RAILS self,shm CASES ${_offer_cases}
          ARGS --pull ENV PROUST_OFFER_BYTES=1 PROUST_PROGRESS=thread)
api_cases(PROGRAM offer VARIANT shm_coarse NPROCS 2 RAILS self,shm CASES ${_offer_cases}
          ARGS --pull ENV PROUST_OFFER_BYTES=1 PROUST_LOCKING=coarse)
api_cases(PROGRAM offer VARIANT shm_ring NPROCS 2 RAILS self,shm CASES ${_offer_cases}
          ENV PROUST_OFFER_BYTES=1 PROUST_SHM_RING_SIZE=16K PROUST_STRATEGY=aggreg)
api_cases(PROGRAM offer VARIANT tcp NPROCS 2 RAILS tcp CASES ${_offer_cases}
          ENV PROUST_OFFER_BYTES=1)
api_cases(PROGRAM offer VARIANT off NPROCS 2 RAILS self,shm CASES ${_offer_cases} ARGS --pull
          ENV PROUST_OFFER_BYTES=0)
# block mode: nobody polls while the sender sleeps
api_cases(PROGRAM offer VARIANT shm_block NPROCS 2 RAILS self,shm CASES ${_offer_cases}
          ARGS --pull ENV PROUST_OFFER_BYTES=1 PROUST_PROGRESS=block)
api_cases_check(offer)
# every nonblocking receive offered, under the programs that check order and data
api_job(NAME integrity_shm_offer NPROCS 2 RAILS self,shm PROGRAM integrity
        ENV PROUST_OFFER_BYTES=1)
api_cases(PROGRAM ordering VARIANT shm_offer NPROCS 2 RAILS self,shm CASES ${_ordering_cases}
          ENV PROUST_OFFER_BYTES=1)
api_cases_check(ordering)
api_cases(PROGRAM threads VARIANT shm_offer NPROCS 2 RAILS self,shm CASES ${_threads_cases}
          ENV PROUST_OFFER_BYTES=1)
api_job(NAME match_threads_shm_4_offer NPROCS 4 RAILS self,shm PROGRAM match_threads
        ENV PROUST_OFFER_BYTES=1)
api_cases(PROGRAM pack VARIANT shm_offer NPROCS 2 RAILS self,shm CASES ${_pack_cases}
          ENV PROUST_OFFER_BYTES=1)
api_cases_check(pack)

# ---- 8. ssend, probe, cancel, request and session monitors ------------------
# One test per case of api_sync (`api_sync --help`): api_sync_<case>_<variant>.
set(_sync_cases ssend issend probe cancel cancel_matched request_monitor_before
    request_monitor_after request_monitor_posts request_monitor_free session_monitor)
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM sync VARIANT shm_${strategy} NPROCS 2 RAILS self,shm CASES ${_sync_cases}
            ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM sync VARIANT tcp_${strategy} NPROCS 2 RAILS tcp CASES ${_sync_cases}
            ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases(PROGRAM sync VARIANT shm_noget NPROCS 2 RAILS self,shm CASES ${_sync_cases}
          ENV PROUST_SHM_GET_THRESHOLD=1G)

# ---- 8b. cancelling sends: every rail, both strategies, coarse locking, offers
# One test per case of api_cancel (`api_cancel --help`): api_cancel_<case>_<variant>.
set(_cancel_cases unmatched middle matched pack monitor freed)
api_cases(PROGRAM cancel VARIANT self NPROCS 1 RAILS self CASES ${_cancel_cases})
api_cases(PROGRAM cancel VARIANT shm_loopback NPROCS 1 RAILS shm CASES ${_cancel_cases})
foreach(strategy default aggreg coalesce)
  api_cases(PROGRAM cancel VARIANT shm_${strategy} NPROCS 2 RAILS self,shm CASES ${_cancel_cases}
            ENV PROUST_STRATEGY=${strategy})
  api_cases(PROGRAM cancel VARIANT tcp_${strategy} NPROCS 2 RAILS tcp CASES ${_cancel_cases}
            ENV PROUST_STRATEGY=${strategy})
endforeach()
api_cases(PROGRAM cancel VARIANT shm_noget NPROCS 2 RAILS self,shm CASES ${_cancel_cases}
          ENV PROUST_SHM_GET_THRESHOLD=1G)
api_cases(PROGRAM cancel VARIANT shm_coarse NPROCS 2 RAILS self,shm CASES ${_cancel_cases}
          ENV PROUST_LOCKING=coarse)
api_cases(PROGRAM cancel VARIANT shm_offer NPROCS 2 RAILS self,shm CASES ${_cancel_cases}
          ENV PROUST_OFFER_BYTES=1)
api_cases_check(cancel)

# ---- 9. errors --------------------------------------------------------------
# One test per case of api_errors (`api_errors --help`): api_errors_<case>_<variant>.
set(_errors_cases before_init status_texts init_bad_setting double_init bad_arguments
    truncation)
api_cases(PROGRAM errors VARIANT self NPROCS 1 RAILS self CASES ${_errors_cases})
api_cases(PROGRAM errors VARIANT shm NPROCS 2 RAILS self,shm CASES ${_errors_cases})
api_cases(PROGRAM errors VARIANT tcp NPROCS 2 RAILS tcp CASES ${_errors_cases}
          ENV PROUST_STRATEGY=aggreg)
api_cases(PROGRAM errors VARIANT shm_noget NPROCS 2 RAILS self,shm CASES ${_errors_cases}
          ENV PROUST_SHM_GET_THRESHOLD=1G PROUST_SHM_RING_SIZE=16K)
# without a launcher: a one-process job (singleton bootstrap)
if(TARGET api_errors)
  foreach(c ${_errors_cases})
    add_test(NAME api_errors_${c}_singleton COMMAND api_errors ${c})
    set_tests_properties(api_errors_${c}_singleton PROPERTIES TIMEOUT 60)
  endforeach()
endif()
# proust_init must return an error, not exit, when the configuration cannot work
api_cases(PROGRAM errors VARIANT bogus_rails NPROCS 1 RAILS bogus CASES init_fails TIMEOUT 60)
api_cases(PROGRAM errors VARIANT no_rail_names NPROCS 1 RAILS "," CASES init_fails TIMEOUT 60)
api_cases(PROGRAM errors VARIANT small_ring NPROCS 2 RAILS self,shm CASES init_fails
          ENV PROUST_SHM_RING_SIZE=1000 TIMEOUT 60)
# documented: PROUST_ERR_NO_RAIL if a peer cannot be reached
api_cases(PROGRAM errors VARIANT no_rail_to_peer NPROCS 2 RAILS self CASES init_fails
          TIMEOUT 60)
if(TARGET api_errors)
  add_test(NAME api_errors_init_fails_bogus_rails_singleton COMMAND api_errors init_fails)
  set_tests_properties(api_errors_init_fails_bogus_rails_singleton PROPERTIES TIMEOUT 60
                       ENVIRONMENT "PROUST_RAILS=bogus")
endif()
api_cases_check(errors)

# ---- 10. peer death: a rank SIGKILLs itself mid-transfer ----------------------
# proustrun exits non-zero (a rank died): the survivors' lines are the verdict.
foreach(rails self,shm tcp)
  string(REPLACE "self,shm" "shm" rname ${rails})
  foreach(mode sender-dies receiver-dies)
    foreach(n 2 3)
      set(tname peer_death_${rname}_${mode}_${n})
      api_job(NAME ${tname} NPROCS ${n} RAILS ${rails} PROGRAM peer_death
              ARGS --mode=${mode} LAUNCHER_ARGS --grace 10 TIMEOUT 60)
      if(TARGET api_peer_death)
        set_tests_properties(api_${tname} PROPERTIES
          PASS_REGULAR_EXPRESSION "survivor got PROUST_ERR_(PEER_FAILED|CONN) after [0-9.]+ s.*survivor exiting cleanly"
          FAIL_REGULAR_EXPRESSION "\\] FAIL ")
      endif()
    endforeach()
  endforeach()
endforeach()
# the 16 MiB crawl through the ring (no process_vm_readv): the death lands
# mid-transfer; and a message fully delivered before the death
foreach(variant noget_sender-dies_2 noget_receiver-dies_2 delivered-then-dies_2
        tcp_delivered-then-dies_2)
  string(REGEX MATCH "(sender|receiver|delivered-then)-dies" mode ${variant})
  if(variant MATCHES "^tcp_")
    set(rails tcp)
    set(tname peer_death_${variant})
  else()
    set(rails self,shm)
    set(tname peer_death_shm_${variant})
  endif()
  api_job(NAME ${tname} NPROCS 2 RAILS ${rails} PROGRAM peer_death
          ARGS --mode=${mode} LAUNCHER_ARGS --grace 10 TIMEOUT 60
          ENV PROUST_SHM_GET_THRESHOLD=1G)
  if(TARGET api_peer_death)
    set_tests_properties(api_${tname} PROPERTIES
      PASS_REGULAR_EXPRESSION "survivor got PROUST_ERR_(PEER_FAILED|CONN) after [0-9.]+ s.*survivor exiting cleanly"
      FAIL_REGULAR_EXPRESSION "\\] FAIL ")
  endif()
endforeach()

# a sender asleep behind a full ring learns that its receiver died
api_job(NAME peer_death_shm_full-ring-receiver-dies_2 NPROCS 2 RAILS self,shm PROGRAM peer_death
        ARGS --mode=full-ring-receiver-dies LAUNCHER_ARGS --grace 10 TIMEOUT 60
        ENV PROUST_SHM_RING_SIZE=64K PROUST_PROGRESS=block)
if(TARGET api_peer_death)
  set_tests_properties(api_peer_death_shm_full-ring-receiver-dies_2 PROPERTIES
    PASS_REGULAR_EXPRESSION "survivor got PROUST_ERR_(PEER_FAILED|CONN) after [0-9.]+ s.*survivor exiting cleanly"
    FAIL_REGULAR_EXPRESSION "\\] FAIL ")
endif()

# ---- finalize with sends outstanding and a receive posted ---------------------
# (the program's watchdog stops a hang after 20 s)
api_job(NAME finalize_shm NPROCS 2 RAILS self,shm PROGRAM finalize TIMEOUT 60)
api_job(NAME finalize_shm_noget_aggreg NPROCS 2 RAILS self,shm PROGRAM finalize
        ENV PROUST_SHM_GET_THRESHOLD=1G PROUST_STRATEGY=aggreg TIMEOUT 60)
api_job(NAME finalize_tcp NPROCS 2 RAILS tcp PROGRAM finalize TIMEOUT 60)

# ---- a window of large rendezvous in flight (shm shares copies: PUSH/DONE) ----
if(EXISTS ${API_DIR}/rdv_window.c)
  proust_add_api_program(api_rdv_window ${API_DIR}/rdv_window.c)
  target_include_directories(api_rdv_window PRIVATE ${API_DIR})
  api_job(NAME rdv_window_shm NPROCS 2 RAILS self,shm PROGRAM rdv_window)
  api_job(NAME rdv_window_shm_ring NPROCS 2 RAILS self,shm PROGRAM rdv_window
          ENV PROUST_SHM_GET_THRESHOLD=1G)
  api_job(NAME rdv_window_tcp NPROCS 2 RAILS tcp PROGRAM rdv_window)
  # split_balance: shm's puts (ring, no gets) shared with tcp
  api_job(NAME rdv_window_split_shm_tcp NPROCS 2 RAILS self,shm,tcp PROGRAM rdv_window
          ENV PROUST_STRATEGY=split_balance PROUST_SHM_GET_THRESHOLD=1G)
endif()

# ---- memory freed and obtained again at the same address between transfers --
# (the ofi rail's reads register memory: tests/ofi.cmake runs them there too)
set(_reuse_cases mmap malloc realloc brk)
api_cases(PROGRAM reuse VARIANT shm NPROCS 2 RAILS self,shm CASES ${_reuse_cases})
api_cases(PROGRAM reuse VARIANT tcp NPROCS 2 RAILS tcp CASES ${_reuse_cases})
api_cases_check(reuse)

# ---- one-sided access (proust_mem_*, proust_rma_*): only the ofi rail
# offers it (tests/ofi.cmake); shm and tcp say so ----
api_cases(PROGRAM rma VARIANT shm NPROCS 2 RAILS self,shm CASES none)
api_cases(PROGRAM rma VARIANT tcp NPROCS 2 RAILS tcp CASES none)
api_cases(PROGRAM rma_atomic VARIANT shm NPROCS 2 RAILS self,shm CASES none)
api_cases(PROGRAM rma_atomic VARIANT tcp NPROCS 2 RAILS tcp CASES none)

# ---- chunks overtaking an earlier message (stash), more than one batch ----
if(EXISTS ${API_DIR}/stash.c)
  proust_add_api_program(api_stash ${API_DIR}/stash.c)
  target_include_directories(api_stash PRIVATE ${API_DIR})
  api_job(NAME stash_self_aggreg NPROCS 1 RAILS self PROGRAM stash ENV PROUST_STRATEGY=aggreg)
  api_job(NAME stash_shm_aggreg NPROCS 2 RAILS self,shm PROGRAM stash ENV PROUST_STRATEGY=aggreg)
  api_job(NAME stash_tcp_aggreg NPROCS 2 RAILS tcp PROGRAM stash ENV PROUST_STRATEGY=aggreg)
endif()

# ---- progress engine: background progress, many waiters, shutdown ------------
# One test per case of api_progress (`api_progress --help`):
# api_progress_<case>_<variant>.
# (PROUST_PEER_CHECK_MS is raised so that the periodic liveness check, which
# wakes every sleeper, cannot hide a lost wake-up)
if(EXISTS ${API_DIR}/progress.c)
  proust_add_api_program(api_progress ${API_DIR}/progress.c)
  target_include_directories(api_progress PRIVATE ${API_DIR})
  # rendezvous and callbacks advance while the application computes (thread);
  # data only (poll, block)
  set(_overlap overlap_send overlap_recv overlap_chain overlap_late_monitor)
  foreach(rails self,shm tcp)
    string(REPLACE "self,shm" "shm" rname ${rails})
    foreach(mode thread block poll)
      api_cases(PROGRAM progress VARIANT ${rname}_${mode} NPROCS 2 RAILS ${rails}
                CASES ${_overlap} ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000
                TIMEOUT 60)
    endforeach()
    # without offers: the irecv is matched by the progress thread when the
    # blocking sender's RTS (CF_WAITS) comes, and answered with PUSH
    if(rname STREQUAL "shm")
      api_cases(PROGRAM progress VARIANT shm_thread_nooffer NPROCS 2 RAILS ${rails}
                CASES ${_overlap} ENV PROUST_PROGRESS=thread PROUST_OFFER_BYTES=0
                PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
    endif()
    # block mode's rendezvous helper (tcp only; checked where it starts: 2+ cpus)
    if(rname STREQUAL "tcp")
      api_cases(PROGRAM progress VARIANT tcp_block_helper NPROCS 2 RAILS tcp
                CASES ${_overlap} ENV PROUST_PROGRESS=block PROUST_RDV_THREAD=on
                PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
    endif()
    # 8 threads blocked on one source, each gets its own message
    foreach(mode thread block poll)
      api_cases(PROGRAM progress VARIANT ${rname}_${mode} NPROCS 2 RAILS ${rails}
                CASES waiters ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000
                TIMEOUT 90)
    endforeach()
    api_cases(PROGRAM progress VARIANT ${rname}_coarse NPROCS 2 RAILS ${rails}
              CASES waiters ENV PROUST_LOCKING=coarse PROUST_PEER_CHECK_MS=5000 TIMEOUT 90)
    api_cases(PROGRAM progress VARIANT ${rname}_block_coarse NPROCS 2 RAILS ${rails}
              CASES waiters ENV PROUST_PROGRESS=block PROUST_LOCKING=coarse
              PROUST_PEER_CHECK_MS=5000 TIMEOUT 90)
    if(rname STREQUAL "shm")
      # messages to oneself leave the sleeping progress thread asleep
      foreach(mode thread block)
        api_cases(PROGRAM progress VARIANT ${mode} NPROCS 2 RAILS ${rails} CASES quiet
                  ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
      endforeach()
      # a sender facing a full ring sleeps and is woken when room comes
      foreach(mode thread block poll)
        api_cases(PROGRAM progress VARIANT ${mode} NPROCS 2 RAILS ${rails} CASES fullring
                  ENV PROUST_PROGRESS=${mode} PROUST_SHM_RING_SIZE=64K
                  PROUST_PEER_CHECK_MS=60000 TIMEOUT 60)
      endforeach()
    endif()
    # finalize with waiters just woken and freed rendezvous sends in flight
    foreach(mode thread block poll)
      api_cases(PROGRAM progress VARIANT ${rname}_${mode} NPROCS 2 RAILS ${rails}
                CASES shutdown ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000
                TIMEOUT 60)
    endforeach()
  endforeach()
  api_cases_check(progress)
endif()

# ---- polling tasks: user event sources and the uniform wait ---------------------
# One test per case of api_ptask (`api_ptask --help`): api_ptask_<case>_<variant>.
# (PROUST_PEER_CHECK_MS is raised: the periodic liveness check wakes every
# sleeper, which would hide a missed fd or completion wake-up)
if(EXISTS ${API_DIR}/ptask.c)
  proust_add_api_program(api_ptask ${API_DIR}/ptask.c ${API_DIR}/ptask_callbacks.c
                         ${API_DIR}/ptask_wakeup.c ${API_DIR}/ptask_requests.c
                         ${API_DIR}/ptask_register.c ${API_DIR}/ptask_polling.c)
  target_include_directories(api_ptask PRIVATE ${API_DIR})
  # the cases every progress mode and locking must pass; comm needs 2 processes
  set(_ptask_cases info poll group always fd user_wake user_monitor user_outside user_freed
      errors)
  set(_ptask_variants
      "self_thread\;1\;self\;PROUST_PROGRESS=thread"
      "self_block\;1\;self\;PROUST_PROGRESS=block"
      "self_poll\;1\;self\;PROUST_PROGRESS=poll"
      "shm_thread\;2\;self,shm\;PROUST_PROGRESS=thread"
      "shm_block\;2\;self,shm\;PROUST_PROGRESS=block"
      "shm_poll\;2\;self,shm\;PROUST_PROGRESS=poll"
      "tcp_thread\;2\;tcp\;PROUST_PROGRESS=thread"
      "tcp_block\;2\;tcp\;PROUST_PROGRESS=block"
      "tcp_poll\;2\;tcp\;PROUST_PROGRESS=poll"
      "shm_coarse\;2\;self,shm\;PROUST_LOCKING=coarse"
      "tcp_block_coarse\;2\;tcp\;PROUST_PROGRESS=block\;PROUST_LOCKING=coarse"
      "self_threads2\;1\;self\;PROUST_PROGRESS_THREADS=2"
      "shm_spin0\;2\;self,shm\;PROUST_SPIN_US=0"
      "self_block_spin1000\;1\;self\;PROUST_PROGRESS=block\;PROUST_SPIN_US=1000")
  foreach(entry ${_ptask_variants})
    list(GET entry 0 vname)
    list(GET entry 1 np)
    list(GET entry 2 rails)
    list(SUBLIST entry 3 -1 venv)
    set(vcases ${_ptask_cases})
    if(np EQUAL 2)
      list(APPEND vcases comm)
    endif()
    api_cases(PROGRAM ptask VARIANT ${vname} NPROCS ${np} RAILS ${rails} CASES ${vcases}
              ENV ${venv} PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  endforeach()
  # the source table: full, and used one source at a time
  api_cases(PROGRAM ptask VARIANT self NPROCS 1 RAILS self CASES many reregister TIMEOUT 60)
  api_cases(PROGRAM ptask VARIANT shm NPROCS 2 RAILS self,shm CASES many TIMEOUT 60)
  # sources polled at their frequency while threads sleep (5 kHz: above the
  # millisecond resolution of the wait set's timeout); rates over a 2-core
  # machine: alone, not beside tests that spin on both cores
  foreach(mode thread block poll)
    api_cases(PROGRAM ptask VARIANT self_${mode} NPROCS 1 RAILS self
              CASES frequency_50hz frequency_500hz RUN_SERIAL
              ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  endforeach()
  api_cases(PROGRAM ptask VARIANT self_block NPROCS 1 RAILS self CASES frequency_5khz RUN_SERIAL
            ENV PROUST_PROGRESS=block PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  # the progress thread polls a source that became pending while it slept
  api_cases(PROGRAM ptask VARIANT self_thread NPROCS 1 RAILS self CASES background
            ENV PROUST_PROGRESS=thread PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  api_cases(PROGRAM ptask VARIANT shm_thread NPROCS 2 RAILS self,shm CASES background
            ENV PROUST_PROGRESS=thread PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  # ... and so does a thread holding the wait set for another wait
  foreach(mode thread block poll)
    api_cases(PROGRAM ptask VARIANT self_${mode} NPROCS 1 RAILS self CASES stale_timeout
              ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  endforeach()
  # a source with a block callback and no fd wakes its waiter
  foreach(mode thread block)
    api_cases(PROGRAM ptask VARIANT self_${mode} NPROCS 1 RAILS self CASES block_callback
              ENV PROUST_PROGRESS=${mode} PROUST_PEER_CHECK_MS=5000 TIMEOUT 60)
  endforeach()
  # a callback that completes its source's last request unregisters the source
  foreach(mode thread block)
    api_cases(PROGRAM ptask VARIANT self_${mode} NPROCS 1 RAILS self
              CASES unregister_in_poll unregister_in_group ENV PROUST_PROGRESS=${mode}
              TIMEOUT 60)
  endforeach()
  # bad settings: proust_init returns PROUST_ERR_INVALID (then works without them)
  set(_bad_settings
      "progress_word\;PROUST_PROGRESS=threads"
      "progress_empty\;PROUST_PROGRESS="
      "locking_word\;PROUST_LOCKING=medium"
      "spin_text\;PROUST_SPIN_US=abc"
      "spin_suffix\;PROUST_SPIN_US=10us"
      "spin_negative\;PROUST_SPIN_US=-1"
      "spin_huge\;PROUST_SPIN_US=1e8")
  foreach(entry ${_bad_settings})
    list(GET entry 0 bname)
    list(GET entry 1 benv)
    api_cases(PROGRAM ptask VARIANT ${bname} NPROCS 1 RAILS self CASES init_refused
              ENV ${benv} TIMEOUT 60)
  endforeach()
  # without a launcher (singleton bootstrap)
  add_test(NAME api_ptask_init_refused_progress_singleton COMMAND api_ptask init_refused)
  set_tests_properties(api_ptask_init_refused_progress_singleton PROPERTIES TIMEOUT 60
                       ENVIRONMENT "PROUST_PROGRESS=bogus")
  api_cases_check(ptask)
endif()

# ---- threads and sync under the other progress modes and coarse locking --------
foreach(variant block coarse)
  if(variant STREQUAL "block")
    set(venv PROUST_PROGRESS=block)
  else()
    set(venv PROUST_LOCKING=coarse)
  endif()
  api_cases(PROGRAM threads VARIANT shm_${variant} NPROCS 2 RAILS self,shm
            CASES ${_threads_cases} ENV ${venv})
  api_cases(PROGRAM threads VARIANT tcp_${variant} NPROCS 2 RAILS tcp CASES ${_threads_cases}
            ENV ${venv})
  api_cases(PROGRAM threads VARIANT self_${variant} NPROCS 1 RAILS self CASES ${_threads_cases}
            ENV ${venv})
  api_cases(PROGRAM sync VARIANT shm_${variant} NPROCS 2 RAILS self,shm CASES ${_sync_cases}
            ENV ${venv})
  api_cases(PROGRAM sync VARIANT tcp_${variant} NPROCS 2 RAILS tcp CASES ${_sync_cases}
            ENV ${venv})
endforeach()
api_cases_check(sync)
api_cases_check(threads)

# ---- placement: the API and the init path, on this machine and on XML ---------
set(TOPO_XML_DIR ${CMAKE_CURRENT_SOURCE_DIR}/topology/xml)
api_job(NAME placement_shm NPROCS 2 RAILS self,shm PROGRAM placement ARGS bandwidth)
api_job(NAME placement_tcp_env NPROCS 2 RAILS tcp PROGRAM placement ARGS cores
        ENV PROUST_PLACEMENT_HINT=cores)
api_job(NAME placement_off NPROCS 3 RAILS self,shm,tcp PROGRAM placement ARGS bandwidth
        "PROUST_PLACEMENT=off" ENV PROUST_PLACEMENT=off)
# Hagrid's topology: decided on (8 nodes), never bound to; thread mode too
api_job(NAME placement_xml_hagrid NPROCS 2 RAILS tcp PROGRAM placement
        ARGS bandwidth "8 NUMA node(s)"
        ENV PROUST_TOPOLOGY=${TOPO_XML_DIR}/hagrid8.xml PROUST_PROGRESS=thread)
api_job(NAME placement_xml_override NPROCS 2 RAILS self,shm PROGRAM placement
        ARGS latency "numa4-nic.xml"
        ENV PROUST_TOPOLOGY=${TOPO_XML_DIR}/numa4-nic.xml PROUST_PLACEMENT=override
            PROUST_PLACEMENT_HINT=latency)
# A bad setting fails init with a message, not a hang
add_test(NAME api_placement_bad_setting
         COMMAND sh -c "out=$(PROUST_PLACEMENT=sideways \"$1\" -n 1 \"$2\" latency 2>&1); rc=$?; echo \"$out\"; [ $rc -ne 0 ] && echo \"$out\" | grep -q 'PROUST_PLACEMENT=sideways: expected auto'"
                 sh ${PROUSTRUN} $<TARGET_FILE:api_placement>)
set_tests_properties(api_placement_bad_setting PROPERTIES TIMEOUT 30)

# ---- shm rings have their pages at init (no page faults in the first sends) ----
api_job(NAME shm_resident NPROCS 3 RAILS self,shm PROGRAM shm_resident)
api_job(NAME shm_resident_ring16k NPROCS 2 RAILS self,shm PROGRAM shm_resident
        ENV PROUST_SHM_RING_SIZE=16K)
# ---- per-rail strategy (PROUST_STRATEGY=auto, strategy/strategy.c) -----------
# Each peer's strategy follows its rail's measured cost of a small packet:
# default on shm, coalesce on tcp; PROUST_COALESCE_NS moves the line; a named
# strategy wins. Bursts of small sends and large ones among them, checked.
# (shm under poll: a send that rings a sleeping receiver's doorbell costs
# that system call too, which can tip a run to coalesce; poll keeps the
# receivers awake, so the cost measured is the ring's own)
api_job(NAME strategy_auto_shm NPROCS 2 RAILS self,shm PROGRAM strategy_choice ARGS default
        ENV PROUST_PROGRESS=poll)
api_job(NAME strategy_auto_tcp NPROCS 2 RAILS tcp PROGRAM strategy_choice
        ARGS coalesce --measured)
api_job(NAME strategy_auto_shm_low NPROCS 2 RAILS self,shm PROGRAM strategy_choice
        ARGS coalesce ENV PROUST_COALESCE_NS=0)
api_job(NAME strategy_auto_tcp_high NPROCS 2 RAILS tcp PROGRAM strategy_choice
        ARGS default ENV PROUST_COALESCE_NS=1000000000)
api_job(NAME strategy_forced_aggreg NPROCS 2 RAILS tcp PROGRAM strategy_choice ARGS aggreg
        ENV PROUST_STRATEGY=aggreg)

# ---- shm rings made on first use (drivers/shm.c) ------------------------------
# A ring /dev/shm cannot hold: a clear PROUST_ERR_NOMEM, the rings made before
# still work. /dev/shm of 44 KiB (a mount namespace of its own): the heads of
# the two processes' segments (4 pages each) and one ring's first pages (its
# control line and 4 KiB: 2 pages) fit, a second ring's do not.
if(TARGET api_shm_ring_fail)
  add_test(NAME api_shm_ring_fail
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/small_dev_shm.sh 44k
                   ${PROUSTRUN} -n 2 $<TARGET_FILE:api_shm_ring_fail>)
  set_tests_properties(api_shm_ring_fail PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                       ENVIRONMENT "PROUST_RAILS=self,shm;PROUST_SHM_RING_SIZE=64K")
  # a 256 KiB ring gets 4 KiB of pages when made, 64 KiB when a record goes
  # past them, 128 KiB when a backlog needs more: in 112 KiB that last
  # allocation fails as clearly
  add_test(NAME api_shm_ring_fail_rest
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/small_dev_shm.sh 112k
                   ${PROUSTRUN} -n 2 $<TARGET_FILE:api_shm_ring_fail>)
  set_tests_properties(api_shm_ring_fail_rest PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                       ENVIRONMENT
                       "PROUST_RAILS=self,shm;PROUST_SHM_RING_SIZE=256K;PROUST_TEST_RING_REST=1;PROUST_PROGRESS=block")
endif()
# Peers first contacted late (rings made then), one of them asleep; every
# pair at once afterwards, 0 B - 16 MiB.
foreach(np 2 5 16)
  api_job(NAME late_peer_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM late_peer TIMEOUT 240)
endforeach()
api_job(NAME late_peer_3_tcp NPROCS 3 RAILS self,tcp PROGRAM late_peer)
