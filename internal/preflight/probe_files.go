package preflight

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// readCertificate is the Certificate probe. It reads the first certificate
// of a PEM file, or a DER file as some tools write them.
func readCertificate(path string) (Validity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Validity{}, err
	}
	der := data
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			der = block.Bytes
			break
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Validity{}, fmt.Errorf("%s holds no readable certificate: %w", path, err)
	}
	return Validity{Subject: cert.Subject.String(), NotBefore: cert.NotBefore, NotAfter: cert.NotAfter}, nil
}

// readDirNames is the ReadDir probe: the names of the regular files in dir.
func readDirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// readSubdirs lists the names of the folders in dir.
func readSubdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
