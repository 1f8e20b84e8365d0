# install.cmake: where 'cmake --install' puts deepshare in FHS places, the man pages generated from the
# --help texts and the sample config, and the .deb that 'cpack -G DEB' builds from the same rules.
include(GNUInstallDirs)

install(TARGETS deepshare RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Gavel's tables (MIT, with their notice), read by --synth-gpu-types and the suite's hetero workload.
install(FILES data/gavel/speeds.csv data/gavel/pairs.csv data/gavel/LICENSE data/gavel/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/deepshare/gavel)

# Man pages are regenerated from the binaries' --help and the sample config whenever those change.
set(DS_MAN_DIR ${CMAKE_BINARY_DIR}/man)
set(DS_MKMAN ${PROJECT_SOURCE_DIR}/scripts/mkman.sh)
file(MAKE_DIRECTORY ${DS_MAN_DIR})
add_custom_command(OUTPUT ${DS_MAN_DIR}/deepshare.1
  COMMAND sh ${DS_MKMAN} cli $<TARGET_FILE:deepshare> ${PROJECT_VERSION} ${DS_MAN_DIR}/deepshare.1
  DEPENDS deepshare ${DS_MKMAN} VERBATIM)
add_custom_command(OUTPUT ${DS_MAN_DIR}/deepshared.conf.5
  COMMAND sh ${DS_MKMAN} conf ${PROJECT_SOURCE_DIR}/docs/deepshared.conf.sample ${PROJECT_VERSION}
          ${PROJECT_SOURCE_DIR}/docs/man/deepshared.conf.5.extra ${DS_MAN_DIR}/deepshared.conf.5
  DEPENDS ${DS_MKMAN} ${PROJECT_SOURCE_DIR}/docs/deepshared.conf.sample
          ${PROJECT_SOURCE_DIR}/docs/man/deepshared.conf.5.extra VERBATIM)
set(DS_MAN_PAGES ${DS_MAN_DIR}/deepshare.1 ${DS_MAN_DIR}/deepshared.conf.5)
install(FILES ${DS_MAN_DIR}/deepshare.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

if(TARGET deepshared)
  install(TARGETS deepshared RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
  add_custom_command(OUTPUT ${DS_MAN_DIR}/deepshared.8
    COMMAND sh ${DS_MKMAN} daemon $<TARGET_FILE:deepshared> ${PROJECT_VERSION}
            ${PROJECT_SOURCE_DIR}/docs/man/deepshared.8.extra ${DS_MAN_DIR}/deepshared.8
    DEPENDS deepshared ${DS_MKMAN} ${PROJECT_SOURCE_DIR}/docs/man/deepshared.8.extra VERBATIM)
  list(APPEND DS_MAN_PAGES ${DS_MAN_DIR}/deepshared.8)
  install(FILES ${DS_MAN_DIR}/deepshared.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
  install(FILES ${DS_MAN_DIR}/deepshared.conf.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
  # The daemon reads /etc/deepshare/deepshared.conf by default: the sample goes there for a /usr install
  # (the package), under PREFIX/etc otherwise. dpkg keeps an edited copy on upgrade (a conffile).
  install(FILES docs/deepshared.conf.sample DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/deepshare
          RENAME deepshared.conf)
  # The unit names the package's paths; a build for another prefix gets its own paths in the copy.
  file(READ ${PROJECT_SOURCE_DIR}/deploy/systemd/deepshared.service DS_UNIT)
  string(REPLACE "/usr/sbin/" "${CMAKE_INSTALL_FULL_SBINDIR}/" DS_UNIT "${DS_UNIT}")
  string(REPLACE "/etc/deepshare/" "${CMAKE_INSTALL_FULL_SYSCONFDIR}/deepshare/" DS_UNIT "${DS_UNIT}")
  file(WRITE ${CMAKE_BINARY_DIR}/deepshared.service "${DS_UNIT}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/deploy/systemd/deepshared.service)
  install(FILES ${CMAKE_BINARY_DIR}/deepshared.service DESTINATION lib/systemd/system)
  file(WRITE ${CMAKE_BINARY_DIR}/conffiles "${CMAKE_INSTALL_FULL_SYSCONFDIR}/deepshare/deepshared.conf\n")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/conffiles)
  install(FILES deploy/prometheus/deepshare.rules.yml deploy/prometheus/prometheus.yml
          DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
  # dcgm-exporter's HPC job mapping kept by a Slurm Prolog/Epilog, and the counters deepshared's query reads
  install(PROGRAMS deploy/dcgm-exporter/job-map.sh DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/dcgm-exporter)
  install(FILES deploy/dcgm-exporter/counters.csv DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/dcgm-exporter)
endif()
add_custom_target(man ALL DEPENDS ${DS_MAN_PAGES})

# cpack -G DEB: dependencies come from dpkg-shlibdeps on the installed binaries, i.e. the libraries
# actually linked (libxgboost, libjansson, libslurm, libmicrohttpd and theirs).
set(CPACK_PACKAGE_NAME deepshare)
set(CPACK_PACKAGE_VENDOR "deepshare")
set(CPACK_PACKAGE_CONTACT "deepshare maintainers <deepshare@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "QAD-driven scheduler for multi-tenant GPU clusters, with a Slurm controller daemon")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "slurm-client, munge")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
