// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-keep-out-of-line | FileCheck %s

// An outlined loop nest, now an llvm.func, is never inlined back into its caller and stays internal to
// the library; other functions keep their linkage.
llvm.func @ftuner_outlined_main_0(%n: i64) attributes {ftuner.outlined} {
  llvm.return
}

llvm.func @main(%n: i64) {
  llvm.call @ftuner_outlined_main_0(%n) : (i64) -> ()
  llvm.return
}

// CHECK:       llvm.func internal @ftuner_outlined_main_0(%{{.+}}: i64) attributes {ftuner.outlined, no_inline}
// CHECK:       llvm.func @main(
