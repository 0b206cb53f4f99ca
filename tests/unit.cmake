# Single-process unit tests of internal pieces.
proust_add_unit_test(unit_wire unit/wire_test.c)
proust_add_unit_test(unit_boot_all unit/boot_all_test.c)
proust_add_unit_test(unit_strategy unit/strategy_test.c)
proust_add_unit_test(unit_shm_ring unit/shm_ring_test.c)
proust_add_unit_test(unit_shm_claim unit/shm_claim_test.c)
proust_add_unit_test(unit_colocate unit/colocate_test.c)
proust_add_unit_test(unit_shm_presence unit/shm_presence_test.c)
proust_add_unit_test(unit_shm_flush unit/shm_flush_test.c)
proust_add_unit_test(unit_wait_boost unit/boost_test.c)
set_tests_properties(unit_wait_boost PROPERTIES SKIP_RETURN_CODE 77)
proust_add_unit_test(unit_copy unit/copy_test.c)
set_tests_properties(unit_copy PROPERTIES SKIP_RETURN_CODE 77)
proust_add_unit_test(unit_unexp_pool unit/unexp_pool_test.c)
proust_add_unit_test(unit_inmsg_cache unit/inmsg_cache_test.c)
proust_add_unit_test(unit_config unit/config_test.c)

# docs/CONFIG.md names every variable proust-info prints.
add_test(NAME config_doc
         COMMAND sh -c "$<TARGET_FILE:proust-info> | sed -n 's/^  \\(PROUST_[A-Z_]*\\)=.*/\\1/p' | while read v; do grep -q \"\\`$v\\`\" '${PROJECT_SOURCE_DIR}/docs/CONFIG.md' || { echo \"docs/CONFIG.md does not document $v\"; exit 1; }; done")
set_tests_properties(config_doc PROPERTIES TIMEOUT 30)
proust_add_unit_test(unit_tcp_frame unit/tcp_frame_test.c)
proust_add_unit_test(unit_pmi_wire unit/pmi_wire_test.c)
proust_add_unit_test(unit_tcp_addr unit/tcp_addr_test.c)

# Layer direction (drivers and strategies never reach into the core, the MPI
# layer includes proust.h and its own headers only).
add_test(NAME layering COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_layers.sh
                                    ${PROJECT_SOURCE_DIR}/src)
set_tests_properties(layering PROPERTIES TIMEOUT 30)
# the front end -> agent job description of proustrun across hosts
proust_add_unit_test(unit_setup_msg unit/setup_msg_test.c
                     ${PROJECT_SOURCE_DIR}/tools/proustrun/setup_msg.c)
target_include_directories(unit_setup_msg PRIVATE ${PROJECT_SOURCE_DIR}/tools/proustrun)
# proustrun's host lists, hostfiles, Slurm node lists and rank maps
proust_add_unit_test(unit_proustrun_hosts unit/hosts_test.c
                     ${PROJECT_SOURCE_DIR}/tools/proustrun/hosts.c)
target_include_directories(unit_proustrun_hosts PRIVATE ${PROJECT_SOURCE_DIR}/tools/proustrun)
# the parser of ROMIO_HINTS files (MPI-IO), random bytes included
proust_add_unit_test(unit_hints_file unit/hints_file_test.c
                     ${PROJECT_SOURCE_DIR}/src/mpi/io/file_hints_file.c)
