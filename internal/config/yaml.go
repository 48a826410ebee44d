package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/edgebench/edgebench/internal/cli"
)

// This file decodes a configuration file: unknown keys refused, and
// errors that name the file, the line and the key.

// decodeYAML decodes data over c with unknown fields refused, and records in
// src the file and line each key came from. Errors name the file, the line
// and the field.
func decodeYAML(path string, data []byte, c any, src map[string]string) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return nil // empty file: all defaults
	}
	lines := map[int]string{} // line of a value -> key
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + k.Value
			}
			if prefix == "labels" {
				continue
			}
			src[key] = fmt.Sprintf("%s line %d", path, k.Line)
			lines[k.Line] = key
			if v.Kind == yaml.SequenceNode {
				for _, item := range v.Content {
					lines[item.Line] = key
				}
			}
			walk(v, key)
		}
	}
	walk(root.Content[0], "")

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(c)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var known []string
	for _, f := range configFields(c) {
		known = append(known, f.key)
	}
	return fmt.Errorf("%s", explainYAMLError(path, te.Errors[0], lines, known))
}

// yamlREs are compiled when a config error needs them, not at start-up.
var yamlREs = sync.OnceValue(func() [3]*regexp.Regexp {
	return [3]*regexp.Regexp{
		regexp.MustCompile(`^line (\d+): (.*)$`),
		regexp.MustCompile(`^field (\S+) not found in type`),
		regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$"),
	}
})

// explainYAMLError turns a decoder's message into one line naming the
// file, the line and the key; an unknown key gets the known one it most
// likely meant.
func explainYAMLError(path, msg string, lines map[int]string, known []string) string {
	re := yamlREs()
	yamlLineRE, yamlUnknownRE, yamlCannotRE := re[0], re[1], re[2]
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return path + ": " + msg
	}
	line, _ := strconv.Atoi(m[1])
	rest := m[2]
	prefix := fmt.Sprintf("%s line %d: ", path, line)
	key := lines[line]
	if u := yamlUnknownRE.FindStringSubmatch(rest); u != nil {
		if key == "" {
			key = u[1]
		}
		if near := cli.Closest(key, known); near != "" {
			return prefix + fmt.Sprintf("unknown field %q; did you mean %s?", key, near)
		}
		return prefix + fmt.Sprintf("unknown field %q", key)
	}
	if c := yamlCannotRE.FindStringSubmatch(rest); c != nil {
		want := c[3]
		switch want {
		case "time.Duration":
			want = "a duration (e.g. 30s, 5m)"
		case "int", "int64":
			want = "an integer"
		case "float64":
			want = "a number"
		case "bool", "*bool":
			want = "true or false"
		case "string":
			want = "a string"
		default:
			if strings.HasPrefix(want, "[]") {
				want = "a list"
			} else if strings.HasPrefix(want, "map[") || strings.Contains(want, ".") {
				want = "a mapping"
			}
		}
		got := c[2]
		if got == "" {
			got = map[string]string{"seq": "a list", "map": "a mapping"}[c[1]]
			if got == "" {
				got = "a " + c[1]
			}
		} else {
			got = strconv.Quote(got)
		}
		rest = fmt.Sprintf("want %s, got %s", want, got)
	}
	if key != "" {
		return prefix + key + ": " + rest
	}
	return prefix + rest
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}
