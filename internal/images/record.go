package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Record is what was imported, by the archives' SHA-256: an archive seen
// again (the same file, or a copy under another name) is not imported
// again while the images it gave are still in containerd. It lives in the
// kubeedge directory, which only SYSTEM and Administrators may open:
// whoever could write it could make the node skip an archive.
type Record struct {
	Archives []Imported `json:"archives"`
}

// Imported is one archive the node imported.
type Imported struct {
	Digest string `json:"sha256"`
	// Path, Size and ModTime are the file as it was when it was
	// imported: the same three again mean the same file, which then is
	// not read (hashed) again at each start.
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
	// Images are the names the archive gave in containerd.
	Images   []string  `json:"images"`
	Imported time.Time `json:"imported"`
}

// maxRecordBytes bounds the record: a few hundred bytes an archive.
const maxRecordBytes = 4 << 20

// ReadRecord reads the record at path; a missing one is empty.
func ReadRecord(path string) (Record, error) {
	var r Record
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("reading the record of imported images %s: %w", path, err)
	}
	if len(data) > maxRecordBytes {
		return r, fmt.Errorf("the record of imported images %s is %d bytes, more than it can be: remove it, and the archives are imported again", path, len(data))
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("the record of imported images %s is not valid JSON (%v): remove it, and the archives are imported again", path, err)
	}
	return r, nil
}

// bySameFile is the entry of an archive that is the same file, unchanged,
// as one imported: same path, size and modification time.
func (r Record) bySameFile(a Archive) (Imported, bool) {
	for _, e := range r.Archives {
		if e.Path == a.Path && e.Size == a.Size && e.ModTime.Equal(a.ModTime) {
			return e, true
		}
	}
	return Imported{}, false
}

// byDigest is the entry of an archive with this content.
func (r Record) byDigest(digest string) (Imported, bool) {
	for _, e := range r.Archives {
		if e.Digest == digest {
			return e, true
		}
	}
	return Imported{}, false
}

// put adds e, replacing an entry of the same content or the same path.
func (r *Record) put(e Imported) {
	kept := r.Archives[:0]
	for _, have := range r.Archives {
		if have.Digest != e.Digest && have.Path != e.Path {
			kept = append(kept, have)
		}
	}
	r.Archives = append(kept, e)
}

func (r Record) encode() ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}
