package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
		return fmt.Errorf("%s: %s is not %s: write a value of that kind (see --defaultconfig)", where, value, KindName(typeErr.Type))
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

// KindName names the kind of value a field of type t takes, the way the
// author of the YAML file writes it.
func KindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		// metav1.Duration and the like: one value in the file.
		return "a " + t.Name() + " such as 10s"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list such as [a, b]"
	case reflect.Map:
		return "a mapping such as {key: value}"
	case reflect.Struct:
		return "a mapping of fields"
	}
	return t.String()
}

var jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

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
