package runtimeinstall

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// OSHost is this host: its files, and d's service manager, ACLs, CRI
// probe and clock.
func OSHost(d *deps.Dependencies) Host {
	return Host{
		Exists: func(p string) (bool, error) {
			_, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return err == nil, err
		},
		Protect: d.ACLs,
		CopyNew: copyNew,
		// Programs and configuration every user may read, as in
		// containerd's own installation; only the folder's ACL, which
		// the files inherit on Windows, decides who may change them.
		WriteNew: func(p string, data []byte) error { return config.WriteNewFile(p, data, 0o644, false) },
		Remove:   os.Remove,
		ReadFile: os.ReadFile,
		Services: d.Services,
		CRI:      d.Probes.CRI,
		Clock:    d.Clock,
	}
}

// copyNew copies src to dst, which must not exist, and flushes it to disk
// before it is run as a service.
func copyNew(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}
