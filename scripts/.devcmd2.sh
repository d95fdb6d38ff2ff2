export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DOCTOFLOW_ENABLE_CUDA=ON -DOCTOFLOW_ENABLE_PARAVIEW=OFF -DOCTOFLOW_ENABLE_TESTS=OFF -DOCTOFLOW_ENABLE_MPI=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DOCTOFLOW_DEPS_DIR=$PWD/.deps > $OUT/configure.txt 2>&1 || { tail -20 $OUT/configure.txt; exit 1; }
cmake --build build-bench -j16 --target octoflow > $OUT/build.txt 2>&1 || { grep error $OUT/build.txt | head; exit 1; }
b="build-bench/bin/octoflow bench lbm --backend cuda --lattice D3Q19 --size 256 --weak"
mpirun --oversubscribe -np 2 -x PROBE_EVENTS=1 $b
mpirun --oversubscribe -np 2 -x PROBE_SKIP=1 $b
mpirun --oversubscribe -np 2 -x PROBE_SYNC=1 -x PROBE_EVENTS=1 $b
mpirun --oversubscribe -np 1 -x PROBE_EVENTS=1 $b
