"""Every `ftuner.*` attribute the passes write and read, in one place: the name and what it marks.

Ops and functions carry these between passes (select -> tile -> the lowering phases -> the loader);
the uKernel-set attributes' values are encoded and decoded by ir/codecs.py.
"""

# --- on matmul-family ops, from ftuner-select-ukernels (values: ir/codecs.py)
ATTR = "ftuner.ukernels"                       # the vector uKernel set
GPU_ATTR = "ftuner.gpu_ukernels"               # the GPU tile set
AMX_ATTR = "ftuner.amx_ukernels"               # the AMX set (also on the AMX dispatch function)

# --- on functions the tile pass emits
DISPATCH_ATTR = "ftuner.dispatch"              # a matmul dispatch (value: its family)
SET_ATTR = "ftuner.ukernel_set"                # a dispatch: the set it was emitted for
ZERO_INIT_ATTR = "ftuner.zero_init"            # a dispatch that overwrites C
UKERNEL_ATTR = "ftuner.ukernel"                # a static uKernel (ftuner-vectorize-ukernels vectorizes it)
UNROLL_K_ATTR = "ftuner.unroll_k"              # a full-width uKernel whose reduction loop is unrolled
MASKED_UKERNEL_ATTR = "ftuner.masked_ukernel"  # a remainder uKernel written as masked vector code
PACK_ATTR = "ftuner.pack"                      # a B panel pack
ROWS_ATTR = "ftuner.rows"                      # a row-strip function (value: its rows)
AMX_PACK_ATTR = "ftuner.amx_pack"              # an AMX VNNI pack
AMX_ROWS_ATTR = "ftuner.amx_rows"              # an AMX row-strip function (value: its rows)
AMX_PREPACKED_ATTR = "ftuner.amx_prepacked"    # an AMX dispatch whose B is VNNI panels of height `half`
AMX_HEAD_VIEWS_ATTR = "ftuner.amx_head_views"  # an AMX batch dispatch reading A or B as head views (4-D)
PARALLEL_OUTER_ATTR = "ftuner.parallel_outer"  # an op run as one task per index of its outer dims (1 or 2)

# --- written by the lowering phases
EPILOGUE_ATTR = "ftuner.epilogue"              # a dispatch copy running fused consumers (value: how many)
EPILOGUE_OP_ATTR = "ftuner.epilogue_op"        # the generic such a copy runs on each block
AMX_EPILOGUE_OP_ATTR = "ftuner.amx_epilogue_op"  # a generic of an AMX placeholder: an epilogue to fuse
GENERALIZE_ATTR = "ftuner.generalize"          # a transpose ftuner-generalize-transposes rewrites
TILES_ATTR = "ftuner.parallel_tiles"           # a generic ftuner-parallelize-generics tiles over the cores
ROW_CHAIN_ATTR = "ftuner.row_chain"            # a row op ftuner-fuse-row-chains placed in its loop over rows
OUTLINED_ATTR = "ftuner.outlined"              # a loop nest outlined into its own function
USES_AMX_ATTR = "ftuner.uses_amx"              # the module: its loader must request the AMX tile state
ASSERTS_ATTR = "ftuner.asserts"                # the module: its cf.assert messages, by number
PROFILE_SITES_ATTR = "ftuner.profile_sites"    # the module: the profile slots (function, kind, label)

# --- in lowering/scripts/*.mlir
SCRIPT_PARAM_ATTR = "ftuner.script_param"      # a transform op whose sizes the pass sets (value: the name)

# --- read from the input
TARGET_ATTR = "ftuner.target"                  # the module: the target its passes compile for
EXTERNAL_WEIGHTS_ATTR = "ftuner.external_weights"  # the module: its blobs' file and offsets (ir/weights.py)
UNCHECKED_REGIONS_ATTR = "ftuner.unchecked_regions"   # the module: regions the shape rules skip
