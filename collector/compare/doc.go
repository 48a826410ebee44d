// Package compare compares groups of runs as benchstat does: it groups
// the store's runs by device, run label, system-info field or part of
// the spec (Runs, over the store's GroupRuns), keeps runs of different
// work in tables of their own, and reports per figure each group's
// median with its 95 % interval and the difference from the base group
// with its interval and Mann-Whitney p-value (Build), as text
// (WriteText), JSON (WriteJSON) or asked over HTTP (ParseQuery). Export
// writes the stored runs as CSV, JSON or Go benchmark lines.
package compare
