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
  }];
}

#endif // NERVE_DIALECTS_TDIM_DIALECT
