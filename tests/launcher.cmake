# Tests of proustrun and of the boot protocol (embedded and singleton
# bootstraps). They need neither libproust nor the engine: the client links
# the boot sources directly.
# The bootstrap layer alone (and what it uses), for test programs of it.
set(BOOT_LAYER_SOURCES
  ${PROJECT_SOURCE_DIR}/src/boot/boot.c
  ${PROJECT_SOURCE_DIR}/src/boot/embedded.c
  ${PROJECT_SOURCE_DIR}/src/boot/singleton.c
  ${PROJECT_SOURCE_DIR}/src/boot/pmi1.c
  ${PROJECT_SOURCE_DIR}/src/boot/pmi2.c
  ${PROJECT_SOURCE_DIR}/src/boot/pmix.c
  ${PROJECT_SOURCE_DIR}/src/boot/pmi_wire.c
  ${PROJECT_SOURCE_DIR}/src/common/config.c
  ${PROJECT_SOURCE_DIR}/src/common/log.c
  ${PROJECT_SOURCE_DIR}/src/common/status.c)
function(boot_layer_program name source)
  add_executable(${name} ${source} ${BOOT_LAYER_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PRIVATE Threads::Threads PkgConfig::PMIX)
endfunction()

boot_layer_program(launcher_boot_client launcher/boot_client.c)

# One ctest per case of launcher/launcher_tests.sh.
set(PROUST_LAUNCHER_TESTS
  exit_code signal grace timeout kill_escalation tag_output partial_line stdin env cloexec
  kv failnotice abort missing_program usage forward_signal launcher_death grandchild session lost
  singleton bind)
foreach(t ${PROUST_LAUNCHER_TESTS})
  add_test(NAME launcher_${t}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launcher/launcher_tests.sh
                   ${PROUSTRUN} $<TARGET_FILE:launcher_boot_client> ${t})
  set_tests_properties(launcher_${t} PROPERTIES TIMEOUT 30 LABELS launcher)
endforeach()

# The PMI-1 bootstrap against a launcher the test plays (launcher/pmi1_fake.c):
# a correct one, and ones that answer garbage.
boot_layer_program(launcher_pmi1_fake launcher/pmi1_fake.c)
foreach(s ok nomap garbage close long_line wrong_cmd bad_maxes refused unprintable)
  add_test(NAME launcher_pmi1_${s} COMMAND launcher_pmi1_fake ${s})
  set_tests_properties(launcher_pmi1_${s} PROPERTIES TIMEOUT 30 LABELS launcher)
endforeach()
