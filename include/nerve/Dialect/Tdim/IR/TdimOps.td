//===- TdimOps.td - tdim operations ------------------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_TDIM_OPS
#define NERVE_DIALECTS_TDIM_OPS

include "nerve/Dialect/Tdim/IR/TdimTypes.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Tdim_AnyTensor : Type<CPred<"::llvm::isa<::nerve::tdim::TdimTensorType>($_self)">,
                          "tdim tensor", "::nerve::tdim::TdimTensorType">;
def Tdim_AnyIndex : Type<CPred<"::llvm::isa<::nerve::tdim::TdimIndexType>($_self)">,
                         "typed index", "::nerve::tdim::TdimIndexType">;
def Tdim_DimArrayAttr : TypedArrayAttrBase<Tdim_DimAttr, "array of dimensions">;
// Tensors an op reads: their operands declare the read, as outputs declare
// their writes.
def Tdim_Read : Arg<Tdim_AnyTensor, "", [MemRead]>;
def Tdim_OptRead : Arg<Optional<Tdim_AnyTensor>, "", [MemRead]>;
def Tdim_Reads : Arg<Variadic<Tdim_AnyTensor>, "", [MemRead]>;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Tdim_KernelOp : Tdim_Op<"kernel", [
    Symbol, IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "An entry point: named inputs, named outputs, a body";
  let description = [{
    A kernel is what a user compiles, lists and launches. Its inputs are
    tensors and scalars; its outputs are tensors the body writes (they are
    block arguments like the inputs, so the caller owns every buffer). The
    names written in the source become the names of the arguments in the C++
    API and in `nerve-run --input NAME=FILE.npy`.

    ```mlir
    tdim.kernel @scale(%x: !tdim.tensor<[n: ?], f32>, %alpha: f32)
        -> (%y: !tdim.tensor<[n: ?], f32>) {
      tdim.map ins(%x, %alpha : !tdim.tensor<[n: ?], f32>, f32)
               outs(%y : !tdim.tensor<[n: ?], f32>) {
      ^bb0(%v: f32, %a: f32):
        %r = arith.mulf %v, %a : f32
        tdim.yield %r : f32
      }
      tdim.return
    }
    ```

    Within the signature a dimension name has one size: static sizes must
    agree, and sizes bound at launch are checked by the runtime. The
    exceptions are the axes listed in `variable_dims`: those a `tdim.concat`
    joins along, whose pieces share the name with different sizes (the
    parser records them, so they stay exempt once the concat is lowered).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       StrArrayAttr:$arg_names,
                       I64Attr:$num_outputs,
                       OptionalAttr<Tdim_DimArrayAttr>:$variable_dims);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getNumInputs() {
      return getFunctionType().getNumInputs() - getNumOutputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::mlir::Block &getEntryBlock() { return getBody().front(); }
    ::mlir::BlockArgument getArgument(unsigned i) {
      return getEntryBlock().getArgument(i);
    }
    bool isOutput(unsigned argIndex) { return argIndex >= getNumInputs(); }
    ::llvm::StringRef getArgName(unsigned i) {
      return ::llvm::cast<::mlir::StringAttr>(getArgNames()[i]).getValue();
    }
    /// Dimensions whose size may differ between arguments.
    ::llvm::SmallVector<DimAttr> getVariableDimList();
  }];
}

def Tdim_ReturnOp : Tdim_Op<"return", [Pure, HasParent<"KernelOp">, Terminator, ReturnLike]> {
  let summary = "Ends a kernel";
  let assemblyFormat = "attr-dict";
}

def Tdim_YieldOp : Tdim_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ForOp", "MapOp", "ReduceOp", "ContractOp"]>]> {
  let summary = "Yields values from a loop body or an element region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` qualified(type($values)))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
}

//===----------------------------------------------------------------------===//
// Typed index values
//===----------------------------------------------------------------------===//

def Tdim_ConstOp : Tdim_Op<"const", [Pure, ConstantLike]> {
  let summary = "A constant index of a dimension";
  let description = "`%c = tdim.const 3 : !tdim.index<i>`";
  let arguments = (ins I64Attr:$value);
  let results = (outs Tdim_AnyIndex:$result);
  let assemblyFormat = "$value attr-dict `:` qualified(type($result))";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Tdim_SizeOp : Tdim_Op<"size", [Pure, InferTypeOpAdaptor]> {
  let summary = "The size of a named dimension of a tensor";
  let description = [{
    `%n = tdim.size %x[n] : !tdim.tensor<[t: ?, n: ?], f32>` is the extent of
    `n` in `%x`, as a `!tdim.index<n>` (an exclusive upper bound for loops).
  }];
  let arguments = (ins Tdim_AnyTensor:$tensor, Tdim_DimAttr:$dim);
  let results = (outs Tdim_AnyIndex:$result);
  let assemblyFormat = "$tensor `[` custom<Dim>($dim) `]` attr-dict `:` qualified(type($tensor))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

class Tdim_IndexArithOp<string mnemonic, string what>
    : Tdim_Op<mnemonic, [Pure]> {
  let summary = "The " # what # " of two index values of one dimension";
  let description = [{
    `%s = tdim.}] # mnemonic # [{ %a, %b : !tdim.index<i>`. Both operands index the same
    dimension; mixing dimensions is an error (convert one first with
    `tdim.cast`, `tdim.fold` or `tdim.unfold`).
  }];
  let arguments = (ins Tdim_AnyIndex:$lhs, Tdim_AnyIndex:$rhs);
  let results = (outs Tdim_AnyIndex:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
}
def Tdim_AddOp : Tdim_IndexArithOp<"add", "sum">;
def Tdim_SubOp : Tdim_IndexArithOp<"sub", "difference">;

def Tdim_FoldOp : Tdim_Op<"fold", [Pure]> {
  let summary = "Index of the coarser dimension that holds an index";
  let description = [{
    `%b = tdim.fold %i : !tdim.index<i> to !tdim.index<i/64>` is `%i floordiv
    64`: the block of 64 that `%i` falls in.
  }];
  let arguments = (ins Tdim_AnyIndex:$input);
  let results = (outs Tdim_AnyIndex:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `to` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tdim_UnfoldOp : Tdim_Op<"unfold", [Pure]> {
  let summary = "First index of the finer dimension inside a folded index";
  let description = [{
    `%i = tdim.unfold %b : !tdim.index<i/64> to !tdim.index<i>` is `%b * 64`,
    the first `i` of block `%b` (spio's `block_i.unfold()`).
  }];
  let arguments = (ins Tdim_AnyIndex:$input);
  let results = (outs Tdim_AnyIndex:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `to` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tdim_CastOp : Tdim_Op<"cast", [Pure]> {
  let summary = "Reinterprets an index of one dimension as another";
  let description = [{
    `%i = tdim.cast %x : !tdim.index<x> to !tdim.index<i>` keeps the value and
    changes its dimension, the explicit step spio spells `.cast<I>()` (a thread
    coordinate used as an offset along `i`, say).
  }];
  let arguments = (ins Tdim_AnyIndex:$input);
  let results = (outs Tdim_AnyIndex:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `to` qualified(type($result))";
  let hasFolder = 1;
}

def Tdim_ToIndexOp : Tdim_Op<"to_index", [Pure]> {
  let summary = "The plain `index` value of a typed index";
  let arguments = (ins Tdim_AnyIndex:$input);
  let results = (outs Index:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

def Tdim_FromIndexOp : Tdim_Op<"from_index", [Pure]> {
  let summary = "Types a plain `index` value by a dimension";
  let arguments = (ins Index:$input);
  let results = (outs Tdim_AnyIndex:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($result))";
}

def Tdim_CmpOp : Tdim_Op<"cmp", [Pure]> {
  let summary = "Compares two index values of one dimension";
  let description = "`%in = tdim.cmp lt, %i, %n : !tdim.index<i>` (eq, ne, lt, le, gt, ge).";
  let arguments = (ins Tdim_CmpPredicate:$predicate, Tdim_AnyIndex:$lhs, Tdim_AnyIndex:$rhs);
  let results = (outs I1:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loops, loads and stores
//===----------------------------------------------------------------------===//

def Tdim_ForOp : Tdim_Op<"for", [
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "A loop over an index range of one dimension";
  let description = [{
    ```mlir
    tdim.for %i over i from %lo to %hi parallel { ... }
    %acc = tdim.for %s over t from %lo to %hi reverse iter_args(%g = %zero) -> (f32) {
      ...
      tdim.yield %next : f32
    }
    ```
    The induction variable and the bounds are indices of the dimension
    named after `over`. `parallel` promises
    that iterations are independent: parallel loops are what the compiler
    maps onto GPU threads, and they carry no values. `reverse` walks from
    `%hi - step` down to `%lo`; `step` (default 1) is a positive constant.
  }];
  let arguments = (ins Tdim_AnyIndex:$lowerBound, Tdim_AnyIndex:$upperBound,
                       Variadic<AnyType>:$inits,
                       DefaultValuedAttr<I64Attr, "1">:$step,
                       UnitAttr:$parallel, UnitAttr:$reverse);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$lowerBound, "::mlir::Value":$upperBound,
                                 CArg<"::mlir::ValueRange", "{}">:$inits,
                                 CArg<"bool", "false">:$parallel,
                                 CArg<"bool", "false">:$reverse)>];
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock()->getArgument(0); }
    ::mlir::Block::BlockArgListType getRegionIterArgs() {
      return getBodyBlock()->getArguments().drop_front();
    }
  }];
}

def Tdim_LoadOp : Tdim_Op<"load"> {
  let summary = "Loads one element, addressed by dimension name";
  let description = [{
    `%v = tdim.load %a[i = %i, k = %k] : !tdim.tensor<[k: 32, i: 64], f32>`.
    Every dimension of the tensor is named exactly once, in any order, by an
    index of that dimension; the tensor's own strides do the rest.
  }];
  let arguments = (ins Arg<Tdim_AnyTensor, "", [MemRead]>:$tensor,
                       Variadic<Tdim_AnyIndex>:$indices);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tdim_StoreOp : Tdim_Op<"store"> {
  let summary = "Stores one element, addressed by dimension name";
  let description = "`tdim.store %v, %a[i = %i, k = %k] : !tdim.tensor<...>`";
  let arguments = (ins AnyType:$value,
                       Arg<Tdim_AnyTensor, "", [MemWrite]>:$tensor,
                       Variadic<Tdim_AnyIndex>:$indices);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tdim_AllocOp : Tdim_Op<"alloc"> {
  let summary = "A new row-major tensor for intermediate results";
  let description = [{
    `%t = tdim.alloc(%n) : !tdim.tensor<[r: 16, n: ?], f32>` takes one size
    (a `!tdim.index` of that dimension) per dynamic dimension, in list order.
    The buffer lives until the kernel returns.
  }];
  let arguments = (ins Variadic<Tdim_AnyIndex>:$dynamicSizes);
  let results = (outs Res<Tdim_AnyTensor, "", [MemAlloc]>:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Views (no copies)
//===----------------------------------------------------------------------===//

def Tdim_SliceOp : Tdim_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "A contiguous range along one dimension, as a view";
  let description = [{
    `%v = tdim.slice %x along c from %s length 64 : !tdim.tensor<[r: ?, c: ?], f32>`
    views `c` in `[%s, %s + 64)` of `%x` without copying; the length may also
    be a `!tdim.index<c>` value. The view keeps `%x`'s strides.
  }];
  let arguments = (ins Tdim_AnyTensor:$source, Tdim_DimAttr:$dim,
                       Tdim_AnyIndex:$start, Optional<Tdim_AnyIndex>:$dynamicLength,
                       OptionalAttr<I64Attr>:$staticLength);
  let results = (outs Tdim_AnyTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tdim_SelectOp : Tdim_Op<"select", [Pure, InferTypeOpAdaptor]> {
  let summary = "One index along one dimension, as a view without it";
  let description = [{
    `%row = tdim.select %x[r = %i] : !tdim.tensor<[r: ?, c: ?], f32>` views
    row `%i` of `%x` as a tensor over `c` alone.
  }];
  let arguments = (ins Tdim_AnyTensor:$source, Tdim_AnyIndex:$index);
  let results = (outs Tdim_AnyTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tdim_ViewOp : Tdim_Op<"view", [Pure, InferTypeOpAdaptor]> {
  let summary = "The same memory with its dimensions listed in another order";
  let description = [{
    `%xt = tdim.view %x as [n, t] : !tdim.tensor<[t: 8, n: 16], f32>` has
    type `!tdim.tensor<[n: 16, t: 8], f32, strides = [1, 16]>`: the same
    elements at the same addresses. Since indexing is by name, this changes
    no computation; it states which dimension a consumer should treat as
    outermost (a transposed view, without a copy).
  }];
  let arguments = (ins Tdim_AnyTensor:$source, Tdim_DimArrayAttr:$order);
  let results = (outs Tdim_AnyTensor:$result);
  let assemblyFormat = "$source `as` custom<DimList>($order) attr-dict `:` qualified(type($source))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Whole-tensor operations (destination-passing: they write their `outs`)
//===----------------------------------------------------------------------===//

def Tdim_MapOp : Tdim_Op<"map", [AttrSizedOperandSegments, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "Elementwise computation over named dimensions (CuPy's ElementwiseKernel)";
  let description = [{
    Runs the region once for every point of the outputs' dimensions. Each
    input tensor is read at that point; an input lacking a dimension is
    broadcast along it, and scalar inputs are passed as they are. The region
    takes one argument per input and yields one value per output.

    ```mlir
    tdim.map ins(%x, %b : !tdim.tensor<[r: ?, c: ?], f16>, !tdim.tensor<[c: ?], f32>)
             outs(%y : !tdim.tensor<[r: ?, c: ?], f16>) {
    ^bb0(%v: f32, %bias: f32):
      %s = arith.addf %v, %bias : f32
      tdim.yield %s : f32
    }
    ```

    A region argument may be wider than its tensor's element type (`f32` for
    `f16`/`bf16` storage: loaded values are extended) and a yielded value may
    be wider than its output's (stored values are rounded), so low-precision
    storage can use f32 arithmetic.
  }];
  // Scalar inputs carry the read effect too: an effect on a value that is
  // no memory reads nothing, and ODS cannot split one operand group.
  let arguments = (ins Arg<Variadic<AnyType>, "", [MemRead]>:$inputs,
                       Arg<Variadic<Tdim_AnyTensor>, "", [MemWrite]>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` qualified(type($inputs)) `)`)? `outs` `(` $outputs `:` qualified(type($outputs)) `)`
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tdim_ReduceOp : Tdim_Op<"reduce", [AttrSizedOperandSegments, RecursiveMemoryEffects]> {
  let summary = "Reduction over named dimensions (CuPy's ReductionKernel)";
  let description = [{
    For every point of the outputs' dimensions, combines the inputs over the
    dimensions listed in `over` (exactly those the inputs have and the
    outputs lack):

    - `map` (optional) turns the inputs at one point into accumulator values;
      it may take, after the inputs, one `index` argument per reduced
      dimension (the position along it, for arg-max and friends). Without it
      the inputs are the accumulator values.
    - `combine` merges two accumulators (`2 * N` arguments, `N` results). It
      must be associative and commutative; nerve evaluates it in a fixed
      order, so results are deterministic.
    - `init` gives the identity of each accumulator.
    - `post` (optional) turns the final accumulators and the number of
      combined elements (an `index`) into the output values (mean, say).
    - `max_sum_exp` states that the reduction is a softmax's statistics:
      two f32 accumulators (m, s), `map` yielding (v, 1), `combine` the
      online merge of a maximum and a sum of exp(v - maximum)
      (`tdim-decompose` builds it so). A lowering may then fold several
      values at once (their maximum first, then one exp each).

    ```mlir
    tdim.reduce ins(%x : !tdim.tensor<[r: ?, c: ?], f32>)
                outs(%s : !tdim.tensor<[r: ?], f32>) over [c] init [0.0 : f32]
      combine {
      ^bb0(%a: f32, %b: f32):
        %s = arith.addf %a, %b : f32
        tdim.yield %s : f32
      }
    ```
  }];
  let arguments = (ins Tdim_Reads:$inputs,
                       Arg<Variadic<Tdim_AnyTensor>, "", [MemWrite]>:$outputs,
                       Tdim_DimArrayAttr:$over, ArrayAttr:$init, UnitAttr:$max_sum_exp);
  let regions = (region MaxSizedRegion<1>:$map, SizedRegion<1>:$combine,
                        MaxSizedRegion<1>:$post);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` qualified(type($inputs)) `)` `outs` `(` $outputs `:` qualified(type($outputs)) `)`
    `over` custom<DimList>($over) `init` $init (`max_sum_exp` $max_sum_exp^)? attr-dict-with-keyword
    (`map` $map^)? `combine` $combine (`post` $post^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getNumAccumulators() { return getInit().size(); }
    ::llvm::SmallVector<::mlir::Type> getAccumulatorTypes();
  }];
}

def Tdim_BroadcastOp : Tdim_Op<"broadcast"> {
  let summary = "Copies a tensor along the dimensions it lacks";
  let description = [{
    `tdim.broadcast ins(%b : !tdim.tensor<[c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>)`
    writes `%b` into every row of `%y`. (Any `tdim.map` broadcasts its inputs
    the same way without materialising them.)
  }];
  let arguments = (ins Tdim_Read:$input, Arg<Tdim_AnyTensor, "", [MemWrite]>:$output);
  let assemblyFormat = "`ins` `(` $input `:` qualified(type($input)) `)` `outs` `(` $output `:` qualified(type($output)) `)` attr-dict";
  let hasVerifier = 1;
}

def Tdim_RelayoutOp : Tdim_Op<"relayout"> {
  let summary = "Copies a tensor into another layout of the same dimensions";
  let description = [{
    Transposition is a change of layout, not of meaning:
    `tdim.relayout ins(%x : !tdim.tensor<[t: ?, n: ?], f32>) outs(%y : !tdim.tensor<[n: ?, t: ?], f32>)`
    makes a time-minor copy of a time-major tensor.
  }];
  let arguments = (ins Tdim_Read:$input, Arg<Tdim_AnyTensor, "", [MemWrite]>:$output);
  let assemblyFormat = "`ins` `(` $input `:` qualified(type($input)) `)` `outs` `(` $output `:` qualified(type($output)) `)` attr-dict";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tdim_ConcatOp : Tdim_Op<"concat"> {
  let summary = "Joins tensors end to end along one named dimension";
  let description = [{
    `tdim.concat ins(%a, %b : T1, T2) outs(%y : T3) along c`: the inputs have
    the output's dimensions; their sizes along `c` add up to the output's.
  }];
  let arguments = (ins Tdim_Reads:$inputs,
                       Arg<Tdim_AnyTensor, "", [MemWrite]>:$output, Tdim_DimAttr:$dim);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` qualified(type($inputs)) `)` `outs` `(` $output `:` qualified(type($output)) `)`
    `along` custom<Dim>($dim) attr-dict
  }];
  let hasVerifier = 1;
}

def Tdim_ContractOp : Tdim_Op<"contract", [SingleBlock]> {
  let summary = "Sum of products over the dimensions two tensors share";
  let description = [{
    `out[kept] = sum over contracted of lhs * rhs`, where the contracted
    dimensions are those of the operands that the output lacks; each must
    appear in both operands. Matmul, batched matmul and a linear layer are
    all this op:

    ```mlir
    tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[k: ?, j: ?], f32>)
                  outs(%c : !tdim.tensor<[i: ?, j: ?], f32>)
    ```
    Products are summed in f32 for f16/bf16 storage (f64 for f64).
    `accumulate` adds to the output instead of overwriting it.

    An `epilogue` region turns each sum into the value stored: it takes the
    sum (in the summing type, after `accumulate`'s addition) and one value
    per `with` input read at the same output point (tensors over some of the
    output's dimensions, broadcast along the others, or scalars; as a
    `tdim.map`'s inputs: a region argument may be wider than its element
    type), and yields the output's value (rounded to its element type). A
    linear layer's bias and activation:

    ```mlir
    tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>)
        with(%bias : !tdim.tensor<[j: ?], f16>) outs(%y : !tdim.tensor<[b: ?, j: ?], f16>) epilogue {
    ^bb0(%sum: f32, %c: f32):
      %z = arith.addf %sum, %c : f32
      %zero = arith.constant 0.0 : f32
      %r = arith.maximumf %z, %zero : f32
      tdim.yield %r : f32
    }
    ```
    `tdim-fuse-contract-epilogue` builds it from a `tdim.broadcast` the
    contraction accumulates onto and a `tdim.map` reading its product.

    `scan t carry [v0, ...]` makes the epilogue walk the output dimension
    `t` in order at every other point, carrying states from one step to
    the next: after the `with` values the region takes the states (starting
    from the `carry` values), and after the output's value it yields their
    next values. A neuron reading a linear layer's product over time is
    this (`convert-neuron-to-tdim` builds it): the sum at step `t` is the
    neuron's input, the membrane potential the carried state.

    ```mlir
    tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>)
        outs(%s : !tdim.tensor<[t: ?, b: ?, j: ?], f16>) scan t carry [0.0 : f32] epilogue {
    ^bb0(%x: f32, %v: f32):
      ...
      tdim.yield %spike, %v_next : f32, f32
    }
    ```
  }];
  let arguments = (ins Tdim_Read:$lhs, Tdim_Read:$rhs,
                       Arg<Variadic<AnyType>, "", [MemRead]>:$with,
                       Arg<Tdim_AnyTensor, "", [MemReadAt<0, FullEffect>, MemWrite]>:$output,
                       UnitAttr:$accumulate, OptionalAttr<Tdim_DimAttr>:$scan,
                       OptionalAttr<ArrayAttr>:$carry);
  let regions = (region MaxSizedRegion<1>:$epilogue);
  let assemblyFormat = [{
    `ins` `(` $lhs `,` $rhs `:` qualified(type($lhs)) `,` qualified(type($rhs)) `)`
    (`with` `(` $with^ `:` qualified(type($with)) `)`)?
    `outs` `(` $output `:` qualified(type($output)) `)`
    (`accumulate` $accumulate^)? (`scan` custom<Scan>($scan, $carry)^)? attr-dict
    (`epilogue` $epilogue^)?
  }];
  let extraClassDeclaration = [{
    /// The number of states the epilogue carries along `scan`.
    unsigned getNumCarried() { return getCarryAttr() ? getCarryAttr().size() : 0; }
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

class Tdim_NormalizeOp<string mnemonic, string what> : Tdim_Op<mnemonic> {
  let summary = what # " over a named dimension";
  let arguments = (ins Tdim_Read:$input, Arg<Tdim_AnyTensor, "", [MemWrite]>:$output,
                       Tdim_DimAttr:$dim);
  let assemblyFormat = [{
    `ins` `(` $input `:` qualified(type($input)) `)` `outs` `(` $output `:` qualified(type($output)) `)`
    `over` custom<Dim>($dim) attr-dict
  }];
  let hasVerifier = 1;
}

def Tdim_SoftmaxOp : Tdim_NormalizeOp<"softmax", "Numerically stable softmax"> {
  let description = [{
    `y = exp(x - max(x)) / sum(exp(x - max(x)))` along `dim`, computed in f32
    for f16/bf16 storage.
  }];
}

def Tdim_LogSoftmaxOp : Tdim_NormalizeOp<"log_softmax", "Numerically stable log-softmax"> {
  let description = [{
    `y = x - max(x) - log(sum(exp(x - max(x))))` along `dim`, never through
    `log(softmax(x))`.
  }];
}

def Tdim_LayerNormOp : Tdim_Op<"layer_norm", [AttrSizedOperandSegments]> {
  let summary = "Layer normalisation over named dimensions";
  let description = [{
    `y = (x - mean) / sqrt(var + eps) * weight + bias`, with the mean and the
    (biased) variance taken over the dimensions in `over`. `weight` and `bias`
    are optional; their dimensions are among the normalised ones.

    ```mlir
    tdim.layer_norm ins(%x : !tdim.tensor<[r: ?, c: ?], f32>)
                    weight(%w : !tdim.tensor<[c: ?], f32>) bias(%b : !tdim.tensor<[c: ?], f32>)
                    outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) over [c] eps 1.0e-05
    ```
  }];
  let arguments = (ins Tdim_Read:$input, Tdim_OptRead:$weight, Tdim_OptRead:$bias,
                       Arg<Tdim_AnyTensor, "", [MemWrite]>:$output,
                       Tdim_DimArrayAttr:$over, F64Attr:$eps);
  let assemblyFormat = [{
    `ins` `(` $input `:` qualified(type($input)) `)`
    (`weight` `(` $weight^ `:` qualified(type($weight)) `)`)?
    (`bias` `(` $bias^ `:` qualified(type($bias)) `)`)?
    `outs` `(` $output `:` qualified(type($output)) `)` `over` custom<DimList>($over)
    `eps` $eps attr-dict
  }];
  let hasVerifier = 1;
}

#endif // NERVE_DIALECTS_TDIM_OPS
