package upgrade

import "strings"

// configFlag finds the value of --config in a service's arguments.
func configFlag(args []string) (string, bool) {
	for i, a := range args {
		switch {
		case a == "--config" && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, "--config="):
			return strings.TrimPrefix(a, "--config="), true
		}
	}
	return "", false
}
