package hugepage

import "syscall"

func advise(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
