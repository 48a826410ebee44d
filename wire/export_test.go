package wire

// CheckShape is checkShape, for the fuzzer of package wire_test.
var CheckShape = checkShape
