# dcin's library (CMakeLists.txt includes this for the registry's dcin line).
cs_module(cs_dcin engine/dcin DEPS cs_core cs_topo cs_expand)
# one translation unit: the per-cycle stages call each other across files (eject, receive, lists)
set_target_properties(cs_dcin PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
