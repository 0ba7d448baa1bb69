// RUN: ftuner-opt %s --target=intel-spr --ftuner-annotate-llvm-target | FileCheck %s --check-prefix=SPR
// RUN: ftuner-opt %s --target=x86-avx2 --ftuner-annotate-llvm-target | FileCheck %s --check-prefix=AVX2

// The module gets the target triple; every function definition the target's CPU and the features that
// differ from what that CPU implies (AMX switched on for a Sapphire Rapids target; AVX-512 switched off
// for an AVX2 one); a declaration gets nothing.
llvm.func @expf(f32) -> f32

llvm.func @main() {
  llvm.return
}

// SPR:       module attributes {llvm.target_triple = "x86_64-unknown-linux-gnu"}
// SPR:       llvm.func @expf(f32) -> f32
// SPR-NOT:     target_cpu
// SPR:       llvm.func @main() attributes {target_cpu = "sapphirerapids", target_features = #llvm.target_features<["+amx-tile", "+amx-bf16"]>}
// AVX2:      llvm.func @main() attributes {target_cpu = "x86-64-v3", target_features = #llvm.target_features<["-avx512f"]>}
