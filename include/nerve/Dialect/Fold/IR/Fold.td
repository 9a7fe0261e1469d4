//===- Fold.td - sequential folds that state how partials merge -*- tablegen -*-===//
//
// A reduction lowered to loops stays a reduction: the loop says how two
// partial results merge, so a mapping may split it over threads and blocks
// without rediscovering its combine from side-channel attributes.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_FOLD_IR_FOLD
#define NERVE_DIALECT_FOLD_IR_FOLD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fold_Dialect : Dialect {
  let name = "fold";
  let cppNamespace = "::nerve::fold";
  let summary = "Sequential folds that state how their partial results merge";
  let description = [{
    `fold.for` is the loop a `tdim.reduce` becomes when its combine is more
    than one op (several accumulators, an argmax, an online softmax's
    statistics): a sequential fold, as `scf.for` with `iter_args` would
    write it, plus a `merge` region that merges two partial accumulator
    tuples. A mapping that splits the fold into chunks folds each chunk
    with the loop's own body and merges the chunks' results with `merge`;
    run as it stands, the loop is an `scf.for` (`convert-fold-to-scf`).

    Upstream's `scf.reduce` cannot say this: each of its regions combines
    one result alone, and these merges read every accumulator (the sum of an
    online softmax is rescaled by the maxima).
  }];
}

class Fold_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fold_Dialect, mnemonic, traits>;

def Fold_ForOp : Fold_Op<"for", [RecursiveMemoryEffects]> {
  let summary = "a sequential fold whose partial results merge by its merge region";
  let description = [{
    Iterations `%i` from `lowerBound` up to (not including) `upperBound` by
    `step` fold into the accumulators, which start as `initArgs`: the body
    (`region`, as `scf.for` calls it) takes the index and the accumulators and yields their next
    values, and the op's results are the last ones. The init values are the
    identities of `merge`.

    `merge` takes two partial tuples (2N values: the first tuple, then the
    second) and yields the merged one (N values). It computes only: no
    memory effects, no regions, and no value from outside but constants.
    Folding a range in one go or in consecutive chunks merged in order gives
    the same result up to the rounding of the merge.

    With `max_sum_exp`, the fold has two f32 accumulators (m, s), the
    maximum and the sum of exp(v - m) of the values v it folds, each
    iteration folding one v as the pair (v, 1) and `merge` the online merge
    of two such pairs: a mapping may fold a block of values at once (their
    maximum first, then one exp each).

    ```mlir
    %m, %s = fold.for %i = %c0 to %n step %c1
        iter_args(%m0 = %neg_inf, %s0 = %zero) -> (f32, f32) {
      ...
      fold.yield %m1, %s1 : f32, f32
    } merge {
    ^bb0(%ma: f32, %sa: f32, %mb: f32, %sb: f32):
      ...
      fold.yield %m, %s : f32, f32
    }
    ```
  }];
  let arguments = (ins Index:$lowerBound, Index:$upperBound, Index:$step,
                       Variadic<AnyType>:$initArgs, UnitAttr:$max_sum_exp);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$region, SizedRegion<1>:$merge);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The body: the region's single block.
    ::mlir::Block *getBody() { return &getRegion().front(); }
    /// The iteration's index.
    ::mlir::Value getInductionVar() { return getBody()->getArgument(0); }
    /// The accumulators as the body sees them.
    ::mlir::Block::BlockArgListType getRegionIterArgs() {
      return getBody()->getArguments().drop_front();
    }
    /// What the body yields: the accumulators' next values.
    ::mlir::OperandRange getYieldedValues() {
      return getBody()->getTerminator()->getOperands();
    }
  }];
}

def Fold_YieldOp : Fold_Op<"yield", [Pure, Terminator, HasParent<"ForOp">]> {
  let summary = "the values a fold.for region yields";
  let description = [{
    Ends both regions of a `fold.for`: the accumulators' next values (body)
    or the merged tuple (merge).
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // NERVE_DIALECT_FOLD_IR_FOLD
