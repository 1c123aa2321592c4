# The Debian packages (docs/packaging.md): `cpack -G DEB` in build/ writes
#   gpurig_VERSION_amd64.deb      gpurig, its data, man page, completions, the export unit
#   gpurig-mpi_VERSION_amd64.deb  gpurig-mpi (bench --mpi, fleet --mpi), where Open MPI was found
# Included from CMakeLists.txt after every install() rule: the components it names are theirs.
#
# Components: gpurig (the plain install rules) and mpi (gpurig-mpi) are what `cmake --install`
# also installs. debian and debian-mpi hold what only a package carries (the systemd unit at
# /lib/systemd/system with /usr/bin in its ExecStart, copyright, changelog.gz, the Slurm scripts
# as examples): EXCLUDE_FROM_ALL, so a `cmake --install --prefix ~/.local` never writes outside
# its prefix.

set(GPURIG_DEB_MAINTAINER "Seed 349c15a6 maintainers <maintainers@users.noreply.a-seed-349c15a6.example>")
set(GPURIG_DEB_DIR ${CMAKE_BINARY_DIR}/debian)
file(MAKE_DIRECTORY ${GPURIG_DEB_DIR})

# Debian wants the changelog and man pages gzipped, without gzip's timestamp (-n) so that two
# builds of one tree give the same package.
add_custom_command(OUTPUT ${GPURIG_DEB_DIR}/changelog.gz
  COMMAND sh -c "gzip -9n <'${CMAKE_SOURCE_DIR}/cmake/debian/changelog' >'${GPURIG_DEB_DIR}/changelog.gz'"
  DEPENDS ${CMAKE_SOURCE_DIR}/cmake/debian/changelog
  VERBATIM)
add_custom_target(deb_changelog ALL DEPENDS ${GPURIG_DEB_DIR}/changelog.gz)

# The unit as the package installs it: contrib's, with the binary at /usr/bin and its opening
# comment saying how to turn it on (the package never enables or starts it).
file(READ ${CMAKE_SOURCE_DIR}/contrib/gpurig-export.service gpurig_unit)
string(REPLACE "/usr/local/bin/gpurig" "/usr/bin/gpurig" gpurig_unit "${gpurig_unit}")
string(REGEX REPLACE "# Install: [^\n]*\n#[^\n]*\n#[^\n]*\n"
       "# The gpurig package installs this unit but does not enable it:\n#   systemctl enable --now gpurig-export\n"
       gpurig_unit "${gpurig_unit}")
file(WRITE ${GPURIG_DEB_DIR}/gpurig-export.service.tmp "${gpurig_unit}")
configure_file(${GPURIG_DEB_DIR}/gpurig-export.service.tmp ${GPURIG_DEB_DIR}/gpurig-export.service COPYONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/contrib/gpurig-export.service)

# /lib/systemd/system, where Debian 12's own packages put units (debhelper, during the usr-merge
# moratorium); systemd reads both, and lintian 2.116 accepts /lib and /usr/lib alike.
install(FILES ${GPURIG_DEB_DIR}/gpurig-export.service DESTINATION /lib/systemd/system
        COMPONENT debian EXCLUDE_FROM_ALL)
install(FILES ${CMAKE_SOURCE_DIR}/cmake/debian/copyright ${GPURIG_DEB_DIR}/changelog.gz
        DESTINATION share/doc/gpurig COMPONENT debian EXCLUDE_FROM_ALL)
# The Slurm scripts (docs/cluster.md) name /usr/bin/gpurig, so they fit the package's layout.
install(PROGRAMS ${CMAKE_SOURCE_DIR}/contrib/slurm/gpurig-nhc ${CMAKE_SOURCE_DIR}/contrib/slurm/gpurig-prolog
                 ${CMAKE_SOURCE_DIR}/contrib/slurm/gpurig-burn.sbatch
        DESTINATION share/doc/gpurig/examples/slurm COMPONENT debian EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpurig)
set(CPACK_PACKAGE_VENDOR "gpurig")
set(CPACK_PACKAGE_CONTACT "${GPURIG_DEB_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GPURIG_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)

# Depends: what the binaries link (libc6, libhwloc15, libjansson4, and libopenmpi3 for gpurig-mpi;
# ncurses is opened at run time by watch's view alone, so it is a Recommends), computed by dpkg-shlibdeps from the built binaries where
# dpkg-dev is installed, else the same names stated (Debian 12's, minimum versions left out).
find_program(GPURIG_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(GPURIG_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_MAIN_PACKAGE_DEPENDS "libc6, libhwloc15, libjansson4")
  set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "libc6, libhwloc15, libjansson4, libopenmpi3")
endif()

include(CPackComponent)
cpack_add_component_group(main)
cpack_add_component(gpurig GROUP main)
cpack_add_component(debian GROUP main)
set(CPACK_COMPONENTS_ALL gpurig debian)
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME gpurig)
# pci.ids names the devices (without it, vendor and device numbers); libhwloc-plugins reads
# hwloc XML with libxml2 (hwloc's own minimal parser otherwise). The NVIDIA driver's libraries
# are opened at run time where present: without them gpurig judges the wiring and rig files.
# libncursesw6 draws watch's full-screen view (opened at run time; --once, --count, --json without).
set(CPACK_DEBIAN_MAIN_PACKAGE_RECOMMENDS "pci.ids, libhwloc-plugins, libncursesw6")
set(CPACK_DEBIAN_MAIN_PACKAGE_SUGGESTS "hwloc-nox | hwloc, gpurig-mpi")
set(CPACK_DEBIAN_MAIN_DESCRIPTION "wiring, set-up and health checks for multi-GPU machines
gpurig shows how the GPUs, PCIe switches, root complexes, sockets and NICs of
a machine are wired, what that means for peer-to-peer traffic (nvidia-smi's
levels, NCCL's view, bandwidth per pair), and says in plain sentences what is
set up wrong. It also judges machines that do not exist yet from a rig file,
watches GPUs and links (gpurig watch, gpurig export for Prometheus) and burns
them in. It only reads: it never changes a system setting.")

if(TARGET gpurig-mpi)
  file(CREATE_LINK gpurig.1.gz ${GPURIG_DEB_DIR}/gpurig-mpi.1.gz SYMBOLIC)
  install(FILES ${GPURIG_DEB_DIR}/gpurig-mpi.1.gz DESTINATION share/man/man1
          COMPONENT debian-mpi EXCLUDE_FROM_ALL)
  install(FILES ${CMAKE_SOURCE_DIR}/cmake/debian/copyright ${GPURIG_DEB_DIR}/changelog.gz
          DESTINATION share/doc/gpurig-mpi COMPONENT debian-mpi EXCLUDE_FROM_ALL)
  cpack_add_component_group(mpi)
  cpack_add_component(mpi GROUP mpi)
  cpack_add_component(debian-mpi GROUP mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi debian-mpi)
  set(CPACK_DEBIAN_MPI_PACKAGE_NAME gpurig-mpi)
  # gpurig-mpi reads the same data (../share/gpurig) and its man page is gpurig's
  if(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS)
    set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "gpurig (= ${PROJECT_VERSION}), ${CPACK_DEBIAN_MPI_PACKAGE_DEPENDS}")
  else()
    set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "gpurig (= ${PROJECT_VERSION})")
  endif()
  # mpirun; under Slurm, srun starts it without Open MPI's launcher
  set(CPACK_DEBIAN_MPI_PACKAGE_RECOMMENDS "openmpi-bin")
  set(CPACK_DEBIAN_MPI_DESCRIPTION "gpurig for MPI jobs: all-reduce bench and fleet check
gpurig-mpi is gpurig with two more modes, started by mpirun or srun with one
rank per node or per GPU: bench --mpi measures NCCL's all-reduce across the
nodes and names the slowest node and link; fleet --mpi gathers each node's
doctor report to rank 0 and names the node that differs from the others.")
endif()

include(CPack)
