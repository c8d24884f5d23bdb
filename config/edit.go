package config

import (
	"bytes"
	"fmt"

	yamlv3 "gopkg.in/yaml.v3"
)

// Edit is one value to set in a configuration file: the field named by
// its YAML keys, and its value, already checked for the field's type (a
// Go string stays a string in the file: "0123" and "true" are quoted).
type Edit struct {
	Keys  []string
	Value interface{}
}

// SetValues returns the configuration text with each edit applied to its
// node in the YAML tree: the comments, the order and every other value of
// the operator's file stay as they are, unlike writing a parsed
// configuration back. A section the file leaves out is added. Text that
// is not a YAML mapping, or a key path through a value, is an error
// naming the path.
func SetValues(text []byte, edits []Edit) ([]byte, error) {
	text, err := DecodeText(text)
	if err != nil {
		return nil, err
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		doc = yamlv3.Node{Kind: yamlv3.DocumentNode, Content: []*yamlv3.Node{{Kind: yamlv3.MappingNode}}}
	}
	if doc.Kind != yamlv3.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.MappingNode {
		return nil, fmt.Errorf("the configuration is not a YAML mapping of sections")
	}
	for _, e := range edits {
		if err := setValue(doc.Content[0], e); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	enc := yamlv3.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func setValue(n *yamlv3.Node, e Edit) error {
	if len(e.Keys) == 0 {
		return fmt.Errorf("an edit names no field")
	}
	var value yamlv3.Node
	if err := value.Encode(e.Value); err != nil {
		return fmt.Errorf("%s: %w", joinKeys(e.Keys), err)
	}
	for i, key := range e.Keys {
		if n.Kind != yamlv3.MappingNode {
			return fmt.Errorf("%s is not a section in the file, so it has no field %q", joinKeys(e.Keys[:i]), key)
		}
		last := i == len(e.Keys)-1
		var next *yamlv3.Node
		for k := 0; k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == key {
				next = n.Content[k+1]
				break
			}
		}
		switch {
		case next != nil && last:
			// The node keeps its comments; only what it holds changes.
			next.Kind, next.Tag, next.Value, next.Content, next.Style = value.Kind, value.Tag, value.Value, value.Content, value.Style
			return nil
		case next == nil && last:
			n.Content = append(n.Content, &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: key}, &value)
			return nil
		case next == nil || (next.Kind == yamlv3.ScalarNode && next.Tag == "!!null"):
			section := &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
			if next == nil {
				n.Content = append(n.Content, &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: key}, section)
			} else {
				*next = *section
				section = next
			}
			next = section
		}
		n = next
	}
	return nil
}

func joinKeys(keys []string) string {
	if len(keys) == 0 {
		return "the configuration"
	}
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}
