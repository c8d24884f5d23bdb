package config

import "testing"

// The default sandbox image has a variant for every build the node
// supports; 3.9, the earlier default, has none for Windows Server 2025.
func TestDefaultSandboxImageCoversEverySupportedBuild(t *testing.T) {
	builds, known := SandboxBuilds(WindowsSandboxImage)
	if !known {
		t.Fatalf("%s is not in the table of pause releases", WindowsSandboxImage)
	}
	for _, r := range WindowsReleases {
		if !containsBuild(builds, r.Build) {
			t.Errorf("%s has no variant for %s (build %d)", WindowsSandboxImage, r.Name, r.Build)
		}
		if img, ok := SandboxImageFor(r.Build); !ok || img != WindowsSandboxImage {
			t.Errorf("SandboxImageFor(%d) = %q, %v; want the default", r.Build, img, ok)
		}
	}
	if b, _ := SandboxBuilds("registry.k8s.io/pause:3.9"); containsBuild(b, 26100) {
		t.Error("pause 3.9 is listed with build 26100")
	}
}

func TestSandboxBuildsKnowsOnlyListedReleases(t *testing.T) {
	for _, img := range []string{"mcr.microsoft.com/oss/kubernetes/pause:3.10", "registry.k8s.io/pause:3.5",
		"registry.k8s.io/pause@sha256:0000000000000000000000000000000000000000000000000000000000000000", "not an image!"} {
		if _, known := SandboxBuilds(img); known {
			t.Errorf("SandboxBuilds(%q) is known", img)
		}
	}
	if b, known := SandboxBuilds("registry.k8s.io/pause:3.10.1"); !known || len(b) != 2 {
		t.Errorf("pause 3.10.1: %v %v", b, known)
	}
	if _, ok := SandboxImageFor(19045); ok {
		t.Error("a client build has a pause image")
	}
	if !tagLess("3.9", "3.10") || !tagLess("3.10", "3.10.1") || tagLess("3.10.2", "3.10.1") {
		t.Error("tagLess does not order pause tags as versions")
	}
}
