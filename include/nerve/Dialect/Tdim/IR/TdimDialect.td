//===- TdimDialect.td - the typed-dimension dialect --------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_TDIM_DIALECT
#define NERVE_DIALECTS_TDIM_DIALECT

include "mlir/IR/OpBase.td"

def Tdim_Dialect : Dialect {
  let name = "tdim";
  let cppNamespace = "::nerve::tdim";
  let summary = "Tensors with typed, named dimensions and per-tensor layouts";
  let description = [{
    A dimension is a type-level entity with a name (`t`, `n`, `i`, ...). The
    same name in two tensors is the same logical axis; each tensor has its own
    size and stride for it (its layout). Indexing is position-free: an access
    names dimensions, never positions, and naming a dimension a tensor does
    not have is a verifier error.

    A *fold* is a coarser dimension derived from a finer one by an integer
    factor, written `i/64` (spio's `Fold("block_i", "i", 64)`): index `b` of
    `i/64` stands for the 64 indices `64*b ... 64*b+63` of `i`. Folding and
    unfolding index values is always explicit.

    A `!tdim.tensor` is a typed view of memory (like a memref): kernels take
    their inputs and outputs as tensors, and the whole-tensor operations
    (`tdim.map`, `tdim.reduce`, `tdim.softmax`, ...) write into the tensors
    given as their `outs`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class Tdim_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tdim_Dialect, mnemonic, traits>;

#endif // NERVE_DIALECTS_TDIM_DIALECT
