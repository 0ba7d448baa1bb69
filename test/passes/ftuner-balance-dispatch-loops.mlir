// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-balance-dispatch-loops | FileCheck %s

// The OpenMP loop of a dispatch function hands out its blocks dynamically (one busy core does not hold
// the others up); a loop elsewhere keeps its schedule.
func.func private @dispatch(%n: index) attributes {ftuner.dispatch = "matmul"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

func.func private @other(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// CHECK-LABEL: func.func private @dispatch(
// CHECK:         omp.wsloop schedule(dynamic)
// CHECK-LABEL: func.func private @other(
// CHECK:         omp.wsloop {
