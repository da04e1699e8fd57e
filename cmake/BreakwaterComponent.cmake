# Components: every library beside the core (stores, drivers, the simulator)
# is built the same way, by bw_add_component:
#
#   bw_add_component(<name>
#     DESCRIPTION "<one line for pkg-config>"
#     SOURCES <file.c>...
#     [DEPENDS <component>...]         other breakwater components it uses
#     [PKG <VAR>=<module>...]          third-party pkg-config modules, already
#                                      found by the caller with
#                                      pkg_check_modules(<VAR> IMPORTED_TARGET
#                                      <module>)
#     [LIBS <lib>...])                 plain system libraries (rt, m)
#
# It makes, from one set of position-independent objects built with hidden
# visibility:
#   breakwater_<name>         shared, libbreakwater_<name>.so.MAJOR.MINOR,
#                             linked against the shared core, exporting only
#                             the symbols listed in <name>.map beside its
#                             sources (the reviewable ABI);
#   breakwater_<name>_static  static, libbreakwater_<name>.a, PIC (a Python
#                             or Node extension can link it into its own
#                             shared object), on the static core;
# aliases breakwater::<name> and breakwater::<name>_static; an install of
# both into the CMake export breakwater_<name>Targets; and a pkg-config module
# breakwater-<name>. Tests, benchmarks and tools link the static variants
# (BW_COMPONENT_LIBS).

# Writes the pkg-config file of a library at install time, so that the paths
# are those of the prefix really installed to (cmake --install --prefix)
# and are plain absolute paths (no ${pcfiledir}/../.. noise). A relative
# CMAKE_INSTALL_LIBDIR/INCLUDEDIR is taken under the prefix.
function(bw_install_pkgconfig pcname)
  cmake_parse_arguments(P "" "DESCRIPTION;LIBNAME" "REQUIRES;LIBS_PRIVATE"
                        ${ARGN})
  string(REPLACE ";" ", " requires "${P_REQUIRES}")
  string(REPLACE ";" " " libs_private "${P_LIBS_PRIVATE}")
  set(template ${PROJECT_BINARY_DIR}/pkgconfig/${pcname}.pc.in)
  file(WRITE ${template}
"prefix=@BW_PC_PREFIX@
exec_prefix=\${prefix}
libdir=@BW_PC_LIBDIR@
includedir=@BW_PC_INCLUDEDIR@

Name: ${pcname}
Description: ${P_DESCRIPTION}
Version: ${PROJECT_VERSION}
Requires: ${requires}
Libs: -L\${libdir} -l${P_LIBNAME}
Libs.private: ${libs_private}
Cflags: -I\${includedir}
")
  install(CODE "
    set(BW_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
      set(BW_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    else()
      set(BW_PC_LIBDIR \"\\\${prefix}/${CMAKE_INSTALL_LIBDIR}\")
    endif()
    if(IS_ABSOLUTE \"${CMAKE_INSTALL_INCLUDEDIR}\")
      set(BW_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
    else()
      set(BW_PC_INCLUDEDIR \"\\\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}\")
    endif()
    configure_file(\"${template}\"
                   \"${PROJECT_BINARY_DIR}/pkgconfig/${pcname}.pc\" @ONLY)
    file(INSTALL \"${PROJECT_BINARY_DIR}/pkgconfig/${pcname}.pc\"
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  ")
endfunction()

# Compile settings every library shares: hidden visibility (only BW_EXTERN
# is exported) and no semantic interposition (an exported function may be
# inlined into the library's own calls to it).
function(bw_library_settings target)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  if(BW_HAVE_NO_SEM_INTERPOSITION)
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  endif()
endfunction()

# The shared library's exported symbols: exactly those in the version
# script `map` (also checked against the headers by scripts/check_abi.sh).
function(bw_version_script target map)
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
  set_target_properties(${target} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endfunction()

function(bw_add_component name)
  cmake_parse_arguments(C "" "DESCRIPTION" "SOURCES;DEPENDS;PKG;LIBS" ${ARGN})
  set(obj breakwater_${name}_obj)
  set(shared breakwater_${name})
  set(static breakwater_${name}_static)

  set(pkg_targets "")
  set(pkg_modules "")
  foreach(pair ${C_PKG})
    string(REPLACE "=" ";" kv "${pair}")
    list(GET kv 0 var)
    list(GET kv 1 module)
    list(APPEND pkg_targets PkgConfig::${var})
    list(APPEND pkg_modules ${module})
  endforeach()

  add_library(${obj} OBJECT ${C_SOURCES})
  bw_library_settings(${obj})
  target_include_directories(${obj} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${obj} PUBLIC ${pkg_targets})
  foreach(dep ${C_DEPENDS})
    target_link_libraries(${obj} PUBLIC breakwater_${dep}_obj)
  endforeach()

  add_library(${shared} SHARED $<TARGET_OBJECTS:${obj}>)
  add_library(${static} STATIC $<TARGET_OBJECTS:${obj}>)
  bw_version_script(${shared} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.map)
  set_target_properties(${shared} PROPERTIES EXPORT_NAME ${name})
  set_target_properties(${static} PROPERTIES EXPORT_NAME ${name}_static
                                             OUTPUT_NAME breakwater_${name})
  target_link_libraries(${shared} PUBLIC breakwater ${pkg_targets} ${C_LIBS}
                                         Threads::Threads)
  target_link_libraries(${static} PUBLIC breakwater_static ${pkg_targets}
                                         ${C_LIBS} Threads::Threads)
  foreach(dep ${C_DEPENDS})
    target_link_libraries(${shared} PUBLIC breakwater_${dep})
    target_link_libraries(${static} PUBLIC breakwater_${dep}_static)
  endforeach()
  foreach(t ${shared} ${static})
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endforeach()
  add_library(breakwater::${name} ALIAS ${shared})
  add_library(breakwater::${name}_static ALIAS ${static})
  set_property(GLOBAL APPEND PROPERTY BW_COMPONENT_LIBS ${static})
  set_property(GLOBAL APPEND PROPERTY BW_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY BW_COMPONENT_${name}_DEPENDS "${C_DEPENDS}")
  set_property(GLOBAL PROPERTY BW_COMPONENT_${name}_PKG "${C_PKG}")

  install(TARGETS ${shared} ${static} EXPORT breakwater_${name}Targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT breakwater_${name}Targets NAMESPACE breakwater::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/breakwater)

  set(requires breakwater)
  foreach(dep ${C_DEPENDS})
    list(APPEND requires breakwater-${dep})
  endforeach()
  list(APPEND requires ${pkg_modules})
  set(libs_private "")
  foreach(l ${C_LIBS})
    list(APPEND libs_private -l${l})
  endforeach()
  list(APPEND libs_private -lpthread)
  bw_install_pkgconfig(breakwater-${name}
    DESCRIPTION "${C_DESCRIPTION}"
    LIBNAME breakwater_${name}
    REQUIRES ${requires}
    LIBS_PRIVATE ${libs_private})
endfunction()
