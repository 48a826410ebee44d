package probe

// arena hands out pointers for optional figures from two slices, so a
// sample's many absent-or-present values cost two allocations, not one each.
// A slice that grows leaves earlier pointers on the old array, still valid.
type arena struct {
	fs []float64
	us []uint64
}

func newArena(nf, nu int) *arena {
	return &arena{fs: make([]float64, 0, nf), us: make([]uint64, 0, nu)}
}

func (a *arena) f(v float64) *float64 {
	a.fs = append(a.fs, v)
	return &a.fs[len(a.fs)-1]
}

func (a *arena) u(v uint64) *uint64 {
	a.us = append(a.us, v)
	return &a.us[len(a.us)-1]
}
