// Package nodedb reads what edgecore's local database knows about its own
// node. Upstream's metamanager keeps every object the cloud sends the node
// in the SQLite table meta (key "<namespace>/node/<name>", type "node",
// value the object's JSON), so once a node has joined and run, commands on
// the host can answer from there without credentials for the cluster and
// without the cloud being reachable.
package nodedb

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	// The SQLite driver upstream's database layer registers as "sqlite3".
	_ "github.com/mattn/go-sqlite3"
	corev1 "k8s.io/api/core/v1"
)

// ErrNotFound means the database holds no object for the node yet: it has
// not joined, or has not run long enough to receive its Node.
var ErrNotFound = errors.New("the node's object is not in the local database")

// Node returns the Node object of name as the node last received it.
func Node(dataSource, name string) (*corev1.Node, error) {
	suffix := "/node/" + name
	var found *corev1.Node
	err := each(dataSource, "node", func(key, value string) (bool, error) {
		if key != suffix[1:] && !strings.HasSuffix(key, suffix) {
			return true, nil
		}
		var n corev1.Node
		if err := json.Unmarshal([]byte(value), &n); err != nil {
			return false, fmt.Errorf("%s: the stored object %s is not a Node: %w", dataSource, key, err)
		}
		found = &n
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: %s has no node %q", ErrNotFound, dataSource, name)
	}
	return found, nil
}

// Pods returns the pods the cloud has given the node, as the node last
// received them (their status is the cloud's as of that message: the
// cloud sends a pod again when its metadata or spec changes, not its
// status).
func Pods(dataSource string) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	err := each(dataSource, "pod", func(key, value string) (bool, error) {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(value), &p); err != nil {
			return false, fmt.Errorf("%s: the stored object %s is not a Pod: %w", dataSource, key, err)
		}
		pods = append(pods, p)
		return true, nil
	})
	return pods, err
}

// each calls f with the key and value of every object of type typ in the
// database at dataSource until f says stop or fails.
func each(dataSource, typ string, f func(key, value string) (bool, error)) error {
	// Opening a missing file would create an empty database where the node
	// will later look for its own.
	if _, err := os.Stat(dataSource); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s does not exist", ErrNotFound, dataSource)
		}
		return err
	}
	// Read-only, and patient with a running edgecore that holds a write
	// lock for a moment.
	db, err := sql.Open("sqlite3", dataSource+"?_query_only=1&_busy_timeout=5000")
	if err != nil {
		return fmt.Errorf("open %s: %w", dataSource, err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT key, value FROM meta WHERE type = ?`, typ)
	if err != nil {
		return fmt.Errorf("read %s: %w", dataSource, err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, value string
		if err := rows.Scan(&key, &value); err != nil {
			return fmt.Errorf("read %s: %w", dataSource, err)
		}
		more, err := f(key, value)
		if err != nil || !more {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", dataSource, err)
	}
	return nil
}

// PodCIDR is the pod range the cluster gave the node (spec.podCIDR, which
// kube-controller-manager sets with --allocate-node-cidrs).
func PodCIDR(dataSource, name string) (string, error) {
	n, err := Node(dataSource, name)
	if err != nil {
		return "", err
	}
	if n.Spec.PodCIDR == "" {
		return "", fmt.Errorf("node %q has no spec.podCIDR in %s: the cluster does not allocate node pod ranges (kube-controller-manager --allocate-node-cidrs)", name, dataSource)
	}
	return n.Spec.PodCIDR, nil
}

// Count is how many objects of type typ (metamanager's type of the meta
// table: "service", "endpointslice", ...) the database at dataSource
// holds.
func Count(dataSource, typ string) (int, error) {
	n := 0
	err := each(dataSource, typ, func(string, string) (bool, error) {
		n++
		return true, nil
	})
	return n, err
}
