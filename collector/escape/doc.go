// Package escape makes what a device sent safe to print on a terminal:
// Printable writes control characters, bidirectional formatting
// characters and bytes that are not UTF-8 as Go escapes, and
// MakePrintable applies it to every string of a value in place.
package escape
