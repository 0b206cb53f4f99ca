# proust-numaprobe: a quick measurement, the command line, and an XML topology.
set(NUMAPROBE $<TARGET_FILE:proust-numaprobe>)

add_test(NAME numaprobe_quick COMMAND ${NUMAPROBE} --quick)
set_tests_properties(numaprobe_quick PROPERTIES TIMEOUT 60 PASS_REGULAR_EXPRESSION "NUMA node")

# A bad option must give exit status 2 (not merely "some failure").
add_test(NAME numaprobe_bad_option
         COMMAND sh -c "\"$1\" --no-such-option; test $? -eq 2" sh ${NUMAPROBE})
set_tests_properties(numaprobe_bad_option PROPERTIES TIMEOUT 60)

set(NUMAPROBE_XML ${PROJECT_SOURCE_DIR}/tests/topology/xml/numa2-nic1.xml)
if(EXISTS ${NUMAPROBE_XML})
  add_test(NAME numaprobe_xml COMMAND ${NUMAPROBE} --topology ${NUMAPROBE_XML})
  set_tests_properties(numaprobe_xml PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "latency, 2x2|none reported")
endif()
