// racy_shift: every thread reads its right neighbour, then writes its own element, with no
// barrier in between: thread i's read of a[i + 1] races with thread i + 1's write of it.
__global__ void racy_shift(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) {
        int right = a[i + 1];
        a[i] = right * 2;
    }
}
