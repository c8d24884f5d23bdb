//go:build e2e

package e2e

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxKeptLog bounds each log a failed scenario keeps: the end of a longer
// one is what explains a failure.
const maxKeptLog = 64 << 20

// keepLogsOnFailure copies every log file below dir into $E2E_LOGS/<test>
// when the test failed, before the folder is removed: the last lines the
// failure prints rarely show why a node did not do something minutes
// earlier, and a scenario that fails once in several runs cannot be asked
// again. It is registered with t.Cleanup after the folder is made and
// before the processes writing into it start, so it runs after they end.
func keepLogsOnFailure(t *testing.T, dir string) {
	t.Helper()
	t.Cleanup(func() {
		out := os.Getenv("E2E_LOGS")
		if !t.Failed() || out == "" {
			return
		}
		dest := filepath.Join(out, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
		kept := 0
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".log") {
				return nil
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return nil
			}
			if copyLogTail(path, filepath.Join(dest, filepath.Base(dir), rel)) == nil {
				kept++
			}
			return nil
		})
		if kept > 0 {
			t.Logf("kept %d log files of %s in %s", kept, dir, dest)
		}
	})
}

// copyLogTail copies the last maxKeptLog bytes of the file src to dst.
func copyLogTail(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err == nil && st.Size() > maxKeptLog {
		if _, err := in.Seek(st.Size()-maxKeptLog, io.SeekStart); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
