package escape

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Printable is s with what a terminal would act on written as Go escapes:
// control characters (C0 with tab and newline, DEL, C1), bidirectional
// formatting characters and bytes that are not UTF-8. A device's label
// "\x1b]0;pwned\a" prints as that text and cannot retitle the terminal,
// move the cursor or forge a line of a table.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case unsafeRune(r, size):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func unsafeRune(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// MakePrintable applies Printable to every string v points to, map keys
// included, in place: a device's result, run rows or devices before they
// are written as text. v is a pointer, a slice or a map.
func MakePrintable(v any) {
	printable(reflect.ValueOf(v))
}

func printable(v reflect.Value) {
	if !hasStrings(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if p := Printable(v.String()); p != v.String() {
				v.SetString(p)
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			printable(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				printable(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			printable(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var all []kv
		for iter.Next() {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(iter.Key())
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			all = append(all, kv{k, e})
		}
		for _, p := range all {
			v.SetMapIndex(p.k, reflect.Value{})
		}
		for _, p := range all {
			printable(p.k)
			printable(p.v)
			v.SetMapIndex(p.k, p.v)
		}
	}
}

var stringTypes = struct {
	sync.Mutex
	m map[reflect.Type]bool
}{m: map[reflect.Type]bool{}}

// hasStrings reports whether a value of type t can hold a string, so the
// walk skips timelines and histograms.
func hasStrings(t reflect.Type) bool {
	stringTypes.Lock()
	defer stringTypes.Unlock()
	return hasStringsLocked(t)
}

func hasStringsLocked(t reflect.Type) bool {
	if has, ok := stringTypes.m[t]; ok {
		return has
	}
	stringTypes.m[t] = false // a recursive type holds a string through another path or not at all
	has := false
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		has = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		has = hasStringsLocked(t.Elem())
	case reflect.Map:
		has = hasStringsLocked(t.Key()) || hasStringsLocked(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && hasStringsLocked(f.Type) {
				has = true
				break
			}
		}
	}
	stringTypes.m[t] = has
	return has
}
