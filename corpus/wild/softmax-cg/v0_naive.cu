// kltrans: launch softmaxRowwiseNaive grid=ceil_div(rows, 128) block=128
// Softmax over each row of a row-major matrix. One thread handles one row:
// find the largest entry, accumulate exp(v - largest), then write every entry
// divided by that total.

typedef float real;

__global__ void softmaxRowwiseNaive(const real* input, real* output, int numRows, int numCols)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < numRows)
    {
        const real* rowIn = input + (long long)idx * numCols;
        real* rowOut = output + (long long)idx * numCols;

        real largest = rowIn[0];
        for (int j = 1; j < numCols; ++j)
        {
            if (rowIn[j] > largest)
            {
                largest = rowIn[j];
            }
        }

        real total = 0;
        for (int j = 0; j < numCols; ++j)
        {
            total += expf(rowIn[j] - largest);
        }

        for (int j = 0; j < numCols; ++j)
        {
            rowOut[j] = expf(rowIn[j] - largest) / total;
        }
    }
}
