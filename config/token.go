package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	yamlv3 "gopkg.in/yaml.v3"
)

// RemoveToken blanks modules.edgeHub.token in the file at path once the
// certificates it was used for exist, so that the bootstrap secret does not
// stay on disk. Only that value changes: comments, order and the operator's
// other settings are kept, unlike writing the whole parsed config back.
// The new file, renamed over path, is made by create, which must make a
// new file and fail when one exists: on Windows the caller gives it the
// descriptor of a file only SYSTEM and Administrators may open, from its
// first byte, as the node's configuration has (a rename keeps a file's
// own descriptor; one made plainly would take its folder's ACL, which
// beside a --config outside C:\etc\kubeedge may let others change it).
// The file keeps its permission bits, which are POSIX's.
func RemoveToken(path string, create func(string) (*os.File, error)) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("remove token from %s: %w", path, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("remove token from %s: %w", path, err)
	}
	text, err := DecodeText(raw)
	if err != nil {
		return fmt.Errorf("remove token from %s: %w", path, err)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil {
		return fmt.Errorf("remove token from %s: %w", path, err)
	}
	token := lookup(&doc, "modules", "edgeHub", "token")
	if token == nil || token.Value == "" {
		return nil
	}
	token.Value = ""
	token.Style = yamlv3.DoubleQuotedStyle
	var out bytes.Buffer
	enc := yamlv3.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("remove token from %s: %w", path, err)
	}
	return writeAtomicWith(path, out.Bytes(), func(p string) (*os.File, error) {
		f, err := create(p)
		if err != nil {
			return nil, err
		}
		if err := f.Chmod(info.Mode().Perm()); err != nil {
			f.Close()
			os.Remove(p)
			return nil, err
		}
		return f, nil
	})
}

// lookup follows mapping keys from the document root.
func lookup(n *yamlv3.Node, keys ...string) *yamlv3.Node {
	if n.Kind == yamlv3.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, key := range keys {
		if n.Kind != yamlv3.MappingNode {
			return nil
		}
		var next *yamlv3.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// WriteNewFile writes a file edgecore generates to path with perm, creating
// its directory. An existing file is only replaced when overwrite is set, so
// that a typo in a command never destroys a working configuration.
func WriteNewFile(path string, data []byte, perm os.FileMode, overwrite bool) error {
	return WriteNewSecret(path, data, overwrite, createMode(perm))
}

// createMode creates a new file with exactly perm, whatever the umask.
func createMode(perm os.FileMode) func(string) (*os.File, error) {
	return func(p string) (*os.File, error) {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return nil, err
		}
		if err := f.Chmod(perm); err != nil {
			f.Close()
			os.Remove(p)
			return nil, err
		}
		return f, nil
	}
}

// WriteNewSecret is WriteNewFile with the file created by create, which
// must make a new file and fail when one exists: on Windows the caller
// gives the file its security descriptor there, so that a token written
// outside the node's restricted folders can be read by no one else from
// its first byte. The file is written beside path and renamed over it,
// and a rename keeps the file's own descriptor.
func WriteNewSecret(path string, data []byte, overwrite bool, create func(string) (*os.File, error)) error {
	if _, err := os.Stat(path); err == nil && !overwrite {
		return fmt.Errorf("%s already exists: pass --force to replace it", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	return writeAtomicWith(path, data, create)
}

// writeAtomicWith writes data to a new file beside path, made by create
// under a name no one else uses, and renames it over path.
func writeAtomicWith(path string, data []byte, create func(string) (*os.File, error)) error {
	var tmp *os.File
	var err error
	for i := 0; i < 100; i++ {
		tmp, err = create(filepath.Join(filepath.Dir(path), fmt.Sprintf(".edgecore-%d.yaml", rand.Uint32())))
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
