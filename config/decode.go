package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes YAML text into out, refusing unknown fields and
// duplicate keys, and turns decoder errors into messages an operator can act
// on: the field's YAML path, its line, the value and what the field takes.
func decodeStrict(text []byte, out interface{}) error {
	js, err := yaml.YAMLToJSONStrict(text)
	if err != nil {
		return fmt.Errorf("not valid YAML: %v (check indentation, and quote values that contain ': ' or start with '*', '&' or '!')", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return explain(text, err)
	}
	return nil
}

func explain(text []byte, err error) error {
	var doc yamlv3.Node
	_ = yamlv3.Unmarshal(text, &doc) // already known to parse

	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		where := typeErr.Field
		value := "a " + typeErr.Value
		if n := lookup(&doc, strings.Split(typeErr.Field, ".")...); n != nil {
			where = fmt.Sprintf("%s (line %d)", typeErr.Field, n.Line)
			if n.Kind == yamlv3.ScalarNode {
				value = fmt.Sprintf("%q", n.Value)
			}
		}
		return fmt.Errorf("%s: %s is not %s: write a value of that kind (see --defaultconfig)", where, value, kindOf(typeErr.Type.String()))
	}
	const unknown = "json: unknown field "
	if msg := err.Error(); strings.HasPrefix(msg, unknown) {
		name := strings.Trim(strings.TrimPrefix(msg, unknown), `"`)
		where := ""
		if path, line := findKey(&doc, name, ""); line > 0 {
			where = fmt.Sprintf(" at %s (line %d)", path, line)
		}
		return fmt.Errorf("unknown field %q%s: check its spelling and indentation against --defaultconfig", name, where)
	}
	return err
}

// kindOf names a Go type the way the YAML author thinks of it.
func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number (" + goType + ")"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "a mapping of fields (" + goType + ")"
	}
	return "of type " + goType
}

// findKey returns the path and line of the first mapping key called name.
func findKey(n *yamlv3.Node, name, path string) (string, int) {
	switch n.Kind {
	case yamlv3.DocumentNode, yamlv3.SequenceNode:
		for _, c := range n.Content {
			if p, line := findKey(c, name, path); line > 0 {
				return p, line
			}
		}
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			p := key.Value
			if path != "" {
				p = path + "." + key.Value
			}
			if key.Value == name {
				return p, key.Line
			}
			if found, line := findKey(n.Content[i+1], name, p); line > 0 {
				return found, line
			}
		}
	}
	return "", 0
}
