# Topology and placement (issue 5): decisions asserted on XML machines we do
# not have (tests/topology/xml), proust-info --placement, and bad settings.
set(TOPO_XML ${CMAKE_CURRENT_SOURCE_DIR}/topology/xml)

proust_add_unit_test(topology_placement topology/placement_test.c)
target_compile_definitions(topology_placement PRIVATE TOPO_XML_DIR="${TOPO_XML}")

set(PROUST_INFO $<TARGET_FILE:proust-info>)
# Hagrid (seed 002): InfiniBand near node 0, rank 3 of 16 one hop away.
add_test(NAME placement_info_hagrid
         COMMAND ${PROUST_INFO} --placement --topology ${TOPO_XML}/hagrid8.xml
                 --local-rank 3 --local-size 16)
# PASS_REGULAR_EXPRESSION ignores the exit status: a crash or a sanitizer
# report after the text must still fail
set(INFO_FAIL "ERROR|Sanitizer|runtime error|Segmentation")
set_tests_properties(placement_info_hagrid PROPERTIES TIMEOUT 30 FAIL_REGULAR_EXPRESSION "${INFO_FAIL}"
  PASS_REGULAR_EXPRESSION "process: +2-3.*mthca0 buffers: +0.*NUMA node 1, cpus 2-3")
# Two NICs that disagree: the hint picks.
add_test(NAME placement_info_hint
         COMMAND ${PROUST_INFO} --placement --topology ${TOPO_XML}/numa2-2nics.xml
                 --nic ib0:1.5:12.5 --nic eth1:1.0:1.2 --hint bandwidth --local-size 2)
set_tests_properties(placement_info_hint PROPERTIES TIMEOUT 30 FAIL_REGULAR_EXPRESSION "${INFO_FAIL}"
  PASS_REGULAR_EXPRESSION "process: +4-7.*rails disagree")
# The environment chooses too.
add_test(NAME placement_info_env
         COMMAND ${PROUST_INFO} --placement --nic ib0:1.5:12.5 --nic eth1:1.0:1.2 --local-size 2)
set_tests_properties(placement_info_env PROPERTIES TIMEOUT 30 FAIL_REGULAR_EXPRESSION "${INFO_FAIL}"
  ENVIRONMENT "PROUST_TOPOLOGY=${TOPO_XML}/numa2-2nics.xml;PROUST_PLACEMENT_HINT=latency"
  PASS_REGULAR_EXPRESSION "process: +0-3")
# This machine (whatever it is) gets a decision with reasons.
add_test(NAME placement_info_here COMMAND ${PROUST_INFO} --placement)
set_tests_properties(placement_info_here PROPERTIES TIMEOUT 30 PASS_REGULAR_EXPRESSION "why:"
                     FAIL_REGULAR_EXPRESSION "${INFO_FAIL}")
# Bad options and settings: exit status 2 with a message.
add_test(NAME placement_info_bad_option
         COMMAND sh -c "\"$1\" --placement --hint sideways; test $? -eq 2" sh ${PROUST_INFO})
add_test(NAME placement_info_bad_topology
         COMMAND sh -c "\"$1\" --placement --topology /nonexistent.xml; test $? -eq 1" sh ${PROUST_INFO})
set_tests_properties(placement_info_bad_option placement_info_bad_topology PROPERTIES TIMEOUT 30)
