package cli

import "strings"

// closest is the candidate that typed most likely meant, or "": the same
// letter in the other case for one letter (-K for -k), else the one at the
// smallest edit distance, at most a third of typed's length (and at least
// 1), or else the only one that typed begins. Leading dashes do not count.
func closest(typed string, candidates []string) string {
	t := strings.ToLower(strings.TrimLeft(typed, "-"))
	best, bestD := "", max(1, len(t)/3)+1
	prefixed, nPrefixed := "", 0
	for _, c := range candidates {
		n := strings.ToLower(strings.TrimLeft(c, "-"))
		if (len(n) == 1) != (len(t) == 1) {
			continue
		}
		if n == t {
			return c
		}
		if len(t) == 1 {
			continue
		}
		if d := editDistance(t, n); d < bestD {
			best, bestD = c, d
		}
		if len(t) >= 3 && strings.HasPrefix(n, t) {
			prefixed, nPrefixed = c, nPrefixed+1
		}
	}
	if best == "" && nPrefixed == 1 {
		return prefixed
	}
	return best
}

// editDistance is the number of single-byte insertions, deletions,
// substitutions and swaps of two neighbours that turn a into b (the
// optimal string alignment distance).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Closest is the candidate that typed most likely meant, or "", as the
// flags' "did you mean" finds it: for a configuration file's keys too.
func Closest(typed string, candidates []string) string { return closest(typed, candidates) }
