# dcin's library (CMakeLists.txt includes this for the registry's dcin line): the engine ops at
# the top of the folder, the cycle model in model/ (its rings, transport and protocol layers in
# subfolders) and step reuse in reuse/.
file(GLOB dcin_layers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/engine/dcin/*/*.c
     ${CMAKE_SOURCE_DIR}/src/engine/dcin/*/*/*.c)
cs_module(cs_dcin engine/dcin SOURCES ${dcin_layers} DEPS cs_core cs_topo cs_expand)
# one translation unit: the per-cycle stages call each other across files (eject, receive, lists)
set_target_properties(cs_dcin PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
