//===- TdimTypes.td - tdim types ---------------------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_TDIM_TYPES
#define NERVE_DIALECTS_TDIM_TYPES

include "nerve/Dialect/Tdim/IR/TdimAttrs.td"
include "mlir/IR/AttrTypeBase.td"

def Tdim_TensorType : TypeDef<Tdim_Dialect, "TdimTensor"> {
  let mnemonic = "tensor";
  let summary = "A strided view of memory whose dimensions are named";
  let description = [{
    `!tdim.tensor<[t: 8, n: ?], f32>` is a tensor with dimensions `t` (size
    8) and `n` (size bound at launch). The order of the list is the order in
    memory, outermost first: without explicit strides the layout is row-major
    in that order, so `[t, n]` is time-major and `[n, t]` time-minor, with the
    same meaning. Indexing never depends on that order.

    Any strided layout can be spelled out, positionally in list order:
    `!tdim.tensor<[t: 8, n: 64], f32, strides = [80, 1]>` (padded rows),
    `strides = [?, 1], offset = ?` (bound at launch). A layout is part of the
    type, so a kernel is compiled for the layout its caller already has.

    Element types: f32, f16, bf16, f64 for data; i1, i8, i32, i64 for masks
    and indices.
  }];
  let parameters = (ins
    ArrayRefParameter<"DimAttr">:$dims,
    ArrayRefParameter<"int64_t">:$sizes,
    "::mlir::Type":$elementType,
    ArrayRefParameter<"int64_t">:$strides,
    "int64_t":$offset
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<DimAttr>":$dims, "::llvm::ArrayRef<int64_t>":$sizes,
        "::mlir::Type":$elementType,
        CArg<"::llvm::ArrayRef<int64_t>", "{}">:$strides,
        CArg<"int64_t", "0">:$offset), [{
      return getCanonical(::mlir::detail::getDefaultDiagnosticEmitFn(elementType.getContext()),
                          elementType.getContext(), dims, sizes, elementType, strides, offset);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The type, with strides that spell out the default layout dropped so
    /// that equal layouts are equal types; null (after a diagnostic) when
    /// invalid.
    static TdimTensorType getCanonical(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *context, ::llvm::ArrayRef<DimAttr> dims,
        ::llvm::ArrayRef<int64_t> sizes, ::mlir::Type elementType,
        ::llvm::ArrayRef<int64_t> strides, int64_t offset);

    unsigned getRank() const { return getDims().size(); }
    /// The position of `dim` in the memory order, if the tensor has it.
    std::optional<unsigned> getPosition(DimAttr dim) const;
    bool hasDim(DimAttr dim) const { return getPosition(dim).has_value(); }
    /// The static size of `dim` (ShapedType::kDynamic when bound at launch).
    int64_t getSize(DimAttr dim) const { return getSizes()[*getPosition(dim)]; }
    /// Row-major in list order (from the offset): strides follow from sizes.
    bool isRowMajor() const { return getStrides().empty(); }
    /// Strides in list order, explicit or derived; kDynamic where unknown
    /// until launch.
    ::llvm::SmallVector<int64_t> getEffectiveStrides() const;
    bool hasStaticShape() const;
    /// `t`, `n` -- the dimension list as diagnostics print it.
    std::string describeDims() const;
    /// The same tensor with another element type.
    TdimTensorType withElementType(::mlir::Type type) const;
  }];
}

def Tdim_IndexType : TypeDef<Tdim_Dialect, "TdimIndex"> {
  let mnemonic = "index";
  let summary = "An index value typed by the dimension it indexes";
  let description = [{
    `!tdim.index<i>` indexes dimension `i`; `!tdim.index<i/64>` its fold by
    64. Arithmetic only combines values of one dimension; converting between
    a dimension and its fold (`tdim.fold`, `tdim.unfold`) or to another
    dimension (`tdim.cast`) is explicit.
  }];
  let parameters = (ins "DimAttr":$dim);
  let assemblyFormat = "`<` custom<Dim>($dim) `>`";
}

#endif // NERVE_DIALECTS_TDIM_TYPES
