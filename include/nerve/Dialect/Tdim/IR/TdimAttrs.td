//===- TdimAttrs.td - tdim attributes ----------------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_TDIM_ATTRS
#define NERVE_DIALECTS_TDIM_ATTRS

include "nerve/Dialect/Tdim/IR/TdimDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tdim_DimAttr : AttrDef<Tdim_Dialect, "Dim"> {
  let mnemonic = "dim";
  let summary = "A named dimension, or a fold of one by an integer factor";
  let description = [{
    `#tdim.dim<i>` names the dimension `i`; `#tdim.dim<i/64>` names its fold
    by 64, the coarser dimension whose index `b` covers `i` in
    `[64*b, 64*b + 64)`. A fold of a fold is the fold by the product of the
    factors, so `i/64/4` is `i/256`.
  }];
  let parameters = (ins "::mlir::StringAttr":$name, "int64_t":$factor);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::StringRef":$name, CArg<"int64_t", "1">:$factor), [{
      return $_get($_ctxt, ::mlir::StringAttr::get($_ctxt, name), factor);
    }]>
  ];
  let extraClassDeclaration = [{
    /// True for `i/64`, false for `i`.
    bool isFold() const { return getFactor() != 1; }
    /// The dimension this one is a fold of (itself when it is not a fold).
    DimAttr getBase() const { return get(getContext(), getName(), 1); }
    /// Whether index values of `this` and `other` measure the same axis,
    /// i.e. one is the other or a fold of it.
    bool sameAxis(DimAttr other) const { return getName() == other.getName(); }
    /// The user-facing spelling, `i` or `i/64`.
    std::string str() const;
  }];
}

def Tdim_CmpPredicate : I64EnumAttr<"CmpPredicate", "comparison of index values", [
    I64EnumAttrCase<"eq", 0>, I64EnumAttrCase<"ne", 1>,
    I64EnumAttrCase<"lt", 2>, I64EnumAttrCase<"le", 3>,
    I64EnumAttrCase<"gt", 4>, I64EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::nerve::tdim";
}

#endif // NERVE_DIALECTS_TDIM_ATTRS
