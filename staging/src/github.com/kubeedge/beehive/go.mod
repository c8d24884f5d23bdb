module github.com/kubeedge/beehive

go 1.22

require (
	github.com/google/uuid v1.6.0
	k8s.io/klog/v2 v2.130.1
)

require github.com/go-logr/logr v1.4.1 // indirect
