/* SPDX-License-Identifier: MIT */
/* img-diff-probe (build: cc -std=c11 -O1 -o /tmp/img-diff-probe docs/probes/img-diff-probe.c -lvulkan -lOpenCL):
 * raw Vulkan + OpenCL, no library. An image round trip (Vulkan uploads a
 * LINEAR VkImage, OpenCL imports its memory through an opaque fd and
 * changes every texel byte in place at the image's rowPitch, Vulkan reads
 * it back), run with the two choices in which clmem_bridge_vk_image_create
 * and the import differed from the plainest such round trip:
 *   ded: the image's memory is a dedicated allocation (1) or not (0; what the
 *        library did where Vulkan neither requires nor prefers one);
 *   use_sub: the kernel runs on a sub-buffer of the plane's bytes (1; what the
 *        import hands out) or on the whole imported buffer (0).
 * Copies are in GENERAL layout, as the library's tests do. It prints, per
 * variant, what Vulkan said of dedicated allocations and whether each of the
 * three reads came back exact. Two environment variables bring it closer
 * still to the library's test: IDP_EXACT_GLOBAL=1 enqueues the kernel with
 * no local size and a global size of exactly the row's bytes, and
 * IDP_SIZE=WxH runs that size (twice) instead of 33x7 and 1921x3;
 * IDP_NO_READ_AFTER=1 drops OpenCL's read between the kernel and the
 * release (CL after: -1); IDP_PATTERN_BPT=n writes the library test's
 * pattern for texels of n one-byte components; IDP_FORMAT=RGBA8 runs one
 * format; the option letter q adds a transfer-only queue family to the
 * device, as the library's tests' device has. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d\n", #x, r_); exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d\n", #x, r_); exit(1); } } while (0)

static VkPhysicalDevice pd; static VkDevice dev; static VkQueue q; static uint32_t qfam; static VkCommandPool pool;
static int has_cc;

static uint32_t memtype(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}
static VkCommandBuffer begin(void) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cb; VK(vkAllocateCommandBuffers(dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, 0, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, 0};
    VK(vkBeginCommandBuffer(cb, &bi)); return cb;
}
static void end(VkCommandBuffer cb) {
    VK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &cb;
    VK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE)); VK(vkQueueWaitIdle(q)); vkFreeCommandBuffers(dev, pool, 1, &cb);
}
static void barrier(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to, uint32_t sq, uint32_t dq) {
    VkImageMemoryBarrier b = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_MEMORY_READ_BIT; b.dstAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_MEMORY_READ_BIT;
    b.oldLayout = from; b.newLayout = to; b.srcQueueFamilyIndex = sq; b.dstQueueFamilyIndex = dq; b.image = img;
    b.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, 0, 0, 0, 1, &b);
}
static void host_buf(VkDeviceSize n, VkBuffer *b, VkDeviceMemory *m, void **p) {
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO}; bc.size = n;
    bc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT; VK(vkCreateBuffer(dev, &bc, 0, b));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, *b, &mr);
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO}; ma.allocationSize = mr.size;
    ma.memoryTypeIndex = memtype(mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VK(vkAllocateMemory(dev, &ma, 0, m)); VK(vkBindBufferMemory(dev, *b, *m, 0)); VK(vkMapMemory(dev, *m, 0, n, 0, p));
}

static const char *ksrc =
    "__kernel void x(__global uchar *b, uint off, uint pitch, uint rowbytes) {\n"
    "  size_t i = get_global_id(0), y = get_global_id(1); if (i >= rowbytes) return;\n"
    "  __global uchar *r = b + off + y * pitch; r[i] = (uchar)(r[i] * 3u + 1u); }\n";

static cl_context ctx; static cl_command_queue cq; static cl_device_id cld; static cl_kernel kern;
static clEnqueueAcquireExternalMemObjectsKHR_fn acq; static clEnqueueReleaseExternalMemObjectsKHR_fn rel;
static PFN_vkGetMemoryFdKHR getfd; static PFN_vkGetImageSubresourceLayout2EXT layout2;

/* Byte x of row y. IDP_PATTERN_BPT=n: the library test's pattern instead,
 * texel x/n, component x%n of one byte: x/n*3 + y*101 + (x%n)*37 + 18. */
static uint8_t pat(uint32_t x, uint32_t y) {
    static int bpt = -1;
    if (bpt < 0) bpt = getenv("IDP_PATTERN_BPT") ? atoi(getenv("IDP_PATTERN_BPT")) : 0;
    if (bpt > 0) return (uint8_t)(x / bpt * 3u + y * 101u + (x % bpt) * 37u + 18u);
    return (uint8_t)(x * 3u + y * 101u + 18u);
}

static void one(VkFormat fmt, const char *name, uint32_t bpt, uint32_t w, uint32_t h, int cc, int ext, int gen, int ded, int use_sub) {
    VkImageLayout xdst = gen ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    VkImageLayout xsrc = gen ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkExternalMemoryImageCreateInfo ei = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkImageCompressionControlEXT ccx = {VK_STRUCTURE_TYPE_IMAGE_COMPRESSION_CONTROL_EXT, 0, VK_IMAGE_COMPRESSION_DISABLED_EXT, 0, 0};
    if (cc) ei.pNext = &ccx;
    VkImageCreateInfo ic = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO}; ic.pNext = &ei; ic.imageType = VK_IMAGE_TYPE_2D; ic.format = fmt;
    ic.extent = (VkExtent3D){w, h, 1}; ic.mipLevels = 1; ic.arrayLayers = 1; ic.samples = VK_SAMPLE_COUNT_1_BIT;
    ic.tiling = VK_IMAGE_TILING_LINEAR; ic.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    ic.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage img; VkResult r = vkCreateImage(dev, &ic, 0, &img);
    if (r) { printf("%-8s cc=%d ext=%d gen=%d: vkCreateImage %d\n", name, cc, ext, gen, r); return; }
    VkImageSubresource sub = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0}; VkSubresourceLayout lay; vkGetImageSubresourceLayout(dev, img, &sub, &lay);
    const char *comp = "n/a";
    if (layout2) {
        VkImageCompressionPropertiesEXT cp = {VK_STRUCTURE_TYPE_IMAGE_COMPRESSION_PROPERTIES_EXT};
        VkSubresourceLayout2EXT l2 = {VK_STRUCTURE_TYPE_SUBRESOURCE_LAYOUT_2_EXT, &cp};
        VkImageSubresource2EXT s2 = {VK_STRUCTURE_TYPE_IMAGE_SUBRESOURCE_2_EXT, 0, sub};
        layout2(dev, img, &s2, &l2);
        comp = cp.imageCompressionFlags == VK_IMAGE_COMPRESSION_DEFAULT_EXT ? "default" :
               cp.imageCompressionFlags & VK_IMAGE_COMPRESSION_DISABLED_EXT ? "disabled" :
               cp.imageCompressionFlags & VK_IMAGE_COMPRESSION_FIXED_RATE_DEFAULT_EXT ? "fixed-rate" : "other";
    }
    VkMemoryDedicatedRequirements dr = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 mr2 = {VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, &dr};
    VkImageMemoryRequirementsInfo2 ri = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2, 0, img};
    vkGetImageMemoryRequirements2(dev, &ri, &mr2); VkMemoryRequirements mr = mr2.memoryRequirements;
    VkMemoryDedicatedAllocateInfo dai = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, 0, img, VK_NULL_HANDLE};
    VkExportMemoryAllocateInfo ex = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, ded ? &dai : 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO}; ma.pNext = &ex; ma.allocationSize = mr.size;
    ma.memoryTypeIndex = memtype(mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory mem; VK(vkAllocateMemory(dev, &ma, 0, &mem)); VK(vkBindImageMemory(dev, img, mem, 0));

    size_t tight = (size_t)w * bpt * h; VkBuffer sb; VkDeviceMemory sm; uint8_t *sp; host_buf(tight, &sb, &sm, (void **)&sp);
    for (uint32_t y = 0; y < h; y++) for (uint32_t x = 0; x < w * bpt; x++) sp[(size_t)y * w * bpt + x] = pat(x, y);
    VkBufferImageCopy bic = {0, 0, 0, {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1}, {0, 0, 0}, {w, h, 1}};
    VkCommandBuffer cb = begin();
    barrier(cb, img, VK_IMAGE_LAYOUT_UNDEFINED, xdst, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    vkCmdCopyBufferToImage(cb, sb, img, xdst, 1, &bic);
    if (ext) barrier(cb, img, xdst, VK_IMAGE_LAYOUT_GENERAL, qfam, VK_QUEUE_FAMILY_EXTERNAL);
    else barrier(cb, img, xdst, VK_IMAGE_LAYOUT_GENERAL, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    end(cb);

    VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, mem, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1; VK(getfd(dev, &gi, &fd)); cl_int err;
    cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd,
                                 CL_MEM_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)cld, CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_mem cm = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, mr.size, 0, &err); CL(err);
    cl_buffer_region rg = {(size_t)lay.offset, (size_t)lay.size}; cl_mem km = cm;
    if (use_sub) { km = clCreateSubBuffer(cm, 0, CL_BUFFER_CREATE_TYPE_REGION, &rg, &err); CL(err); }
    CL(acq(cq, 1, &cm, 0, 0, 0));
    uint8_t *hb = malloc(mr.size); CL(clEnqueueReadBuffer(cq, cm, CL_TRUE, 0, mr.size, hb, 0, 0, 0));
    int before_bad = 0; uint32_t rowbytes = w * bpt;
    for (uint32_t y = 0; y < h; y++) for (uint32_t x = 0; x < rowbytes; x++)
        if (hb[lay.offset + y * lay.rowPitch + x] != pat(x, y)) before_bad++;
    cl_uint off = use_sub ? 0 : (cl_uint)lay.offset, pitch = (cl_uint)lay.rowPitch;
    CL(clSetKernelArg(kern, 0, sizeof km, &km)); CL(clSetKernelArg(kern, 1, 4, &off)); CL(clSetKernelArg(kern, 2, 4, &pitch)); CL(clSetKernelArg(kern, 3, 4, &rowbytes));
    size_t gws[2] = {(rowbytes + 63) / 64 * 64, h}, lws[2] = {64, 1};
    if (getenv("IDP_EXACT_GLOBAL")) { /* as the library's test: no local size, global = the row's bytes */
        gws[0] = rowbytes;
        CL(clEnqueueNDRangeKernel(cq, kern, 2, 0, gws, 0, 0, 0, 0));
    } else {
        CL(clEnqueueNDRangeKernel(cq, kern, 2, 0, gws, lws, 0, 0, 0));
    }
    int clafter_bad = -1; /* not read: as the library's test, nothing between the kernel and the release */
    if (!getenv("IDP_NO_READ_AFTER")) {
        CL(clEnqueueReadBuffer(cq, cm, CL_TRUE, 0, mr.size, hb, 0, 0, 0));
        clafter_bad = 0;
        for (uint32_t y = 0; y < h; y++) for (uint32_t x = 0; x < rowbytes; x++)
            if (hb[lay.offset + y * lay.rowPitch + x] != (uint8_t)(pat(x, y) * 3u + 1u)) clafter_bad++;
    }
    CL(rel(cq, 1, &cm, 0, 0, 0)); CL(clFinish(cq));

    memset(sp, 0, tight);
    cb = begin();
    if (ext) barrier(cb, img, VK_IMAGE_LAYOUT_GENERAL, xsrc, VK_QUEUE_FAMILY_EXTERNAL, qfam);
    else barrier(cb, img, VK_IMAGE_LAYOUT_GENERAL, xsrc, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    vkCmdCopyImageToBuffer(cb, img, xsrc, sb, 1, &bic);
    end(cb);
    int vk_bad = 0; uint8_t first = sp[0];
    for (uint32_t y = 0; y < h; y++) for (uint32_t x = 0; x < rowbytes; x++)
        if (sp[(size_t)y * rowbytes + x] != (uint8_t)(pat(x, y) * 3u + 1u)) vk_bad++;
    printf("%-8s ded=%d sub=%d (requires %u prefers %u) %ux%u gen=%d cc=%d ext=%d compression=%-8s pitch=%llu off=%llu size=%llu | CL before: %d bad | CL after: %d bad | Vulkan after: %d bad of %u (first 0x%02x want 0x%02x)\n",
           name, ded, use_sub, dr.requiresDedicatedAllocation, dr.prefersDedicatedAllocation, w, h, gen, cc, ext, comp, (unsigned long long)lay.rowPitch, (unsigned long long)lay.offset, (unsigned long long)mr.size,
           before_bad, clafter_bad, vk_bad, rowbytes * h, first, (uint8_t)(pat(0, 0) * 3u + 1u));
    free(hb); if (use_sub) clReleaseMemObject(km); clReleaseMemObject(cm);
    vkUnmapMemory(dev, sm); vkDestroyBuffer(dev, sb, 0); vkFreeMemory(dev, sm, 0); vkDestroyImage(dev, img, 0); vkFreeMemory(dev, mem, 0);
}

int main(int argc, char **argv) {
    /* argv[1], letters: v = the Khronos validation layer on, y = the
     * samplerYcbcrConversion feature on (both as the library's tests do). */
    const char *opt = argc > 1 ? argv[1] : "";
    const char *layer = "VK_LAYER_KHRONOS_validation";
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO}; app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO}; ici.pApplicationInfo = &app;
    if (strchr(opt, 'v')) { ici.enabledLayerCount = 1; ici.ppEnabledLayerNames = &layer; }
    printf("options: validation %s, ycbcr %s\n", strchr(opt, 'v') ? "on" : "off", strchr(opt, 'y') ? "on" : "off");
    VkInstance inst; VK(vkCreateInstance(&ici, 0, &inst));
    uint32_t n = 1; VK(vkEnumeratePhysicalDevices(inst, &n, &pd) < 0); if (!n) return 1;
    VkPhysicalDeviceIDProperties idp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &idp}; vkGetPhysicalDeviceProperties2(pd, &p2);
    printf("Vulkan: %s\n", p2.properties.deviceName);
    uint32_t ne = 0; vkEnumerateDeviceExtensionProperties(pd, 0, &ne, 0);
    VkExtensionProperties *ep = calloc(ne, sizeof *ep); vkEnumerateDeviceExtensionProperties(pd, 0, &ne, ep);
    for (uint32_t k = 0; k < ne; k++) {
        if (!strcmp(ep[k].extensionName, VK_EXT_IMAGE_COMPRESSION_CONTROL_EXTENSION_NAME)) has_cc = 1;
        if (strstr(ep[k].extensionName, "compression") || strstr(ep[k].extensionName, "modifier") || strstr(ep[k].extensionName, "host_image_copy"))
            printf("  ext %s\n", ep[k].extensionName);
    }
    float prio = 1; qfam = 0; VkDeviceQueueCreateInfo qcs[2] = {{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, qfam, 1, &prio}};
    uint32_t nq = 1;
    if (strchr(opt, 'q')) { /* a transfer-only queue family too, as the library's tests' device has */
        VkQueueFamilyProperties fp[16]; uint32_t nf = 16; vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fp);
        for (uint32_t i = 0; i < nf && nq == 1; i++)
            if ((fp[i].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(fp[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
                qcs[nq++] = (VkDeviceQueueCreateInfo){VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, i, 1, &prio};
    }
    VkDeviceQueueCreateInfo *qc = qcs;
    const char *dext[] = {"VK_KHR_external_memory_fd", VK_EXT_IMAGE_COMPRESSION_CONTROL_EXTENSION_NAME};
    VkPhysicalDeviceImageCompressionControlFeaturesEXT ccf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_COMPRESSION_CONTROL_FEATURES_EXT, 0, VK_TRUE};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO}; dc.queueCreateInfoCount = nq; dc.pQueueCreateInfos = qc;
    dc.enabledExtensionCount = has_cc ? 2 : 1; dc.ppEnabledExtensionNames = dext; if (has_cc) dc.pNext = &ccf;
    VkPhysicalDeviceSamplerYcbcrConversionFeatures ycf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SAMPLER_YCBCR_CONVERSION_FEATURES, 0, VK_TRUE};
    if (strchr(opt, 'y')) { ycf.pNext = (void *)dc.pNext; dc.pNext = &ycf; }
    VK(vkCreateDevice(pd, &dc, 0, &dev)); vkGetDeviceQueue(dev, qfam, 0, &q);
    VkCommandPoolCreateInfo pc = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, 0, 0, qfam}; VK(vkCreateCommandPool(dev, &pc, 0, &pool));
    getfd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    if (has_cc) layout2 = (PFN_vkGetImageSubresourceLayout2EXT)vkGetDeviceProcAddr(dev, "vkGetImageSubresourceLayout2EXT");
    printf("VK_EXT_image_compression_control: %s\n", has_cc ? "yes" : "no");

    cl_uint np = 0; clGetPlatformIDs(0, 0, &np); cl_platform_id plats[8]; if (np > 8) np = 8; CL(clGetPlatformIDs(np, plats, 0));
    cl_platform_id plat = 0;
    for (cl_uint i = 0; i < np && !cld; i++) {
        cl_uint nd = 0; cl_device_id ds[8]; if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd)) continue;
        for (cl_uint j = 0; j < nd && j < 8; j++) {
            cl_uchar uu[16] = {0}; clGetDeviceInfo(ds[j], CL_DEVICE_UUID_KHR, 16, uu, 0);
            if (!memcmp(uu, idp.deviceUUID, 16)) { plat = plats[i]; cld = ds[j]; }
        }
    }
    if (!cld) { printf("no OpenCL device with the Vulkan UUID\n"); return 0; }
    cl_int err; ctx = clCreateContext(0, 1, &cld, 0, 0, &err); CL(err);
    cq = clCreateCommandQueueWithProperties(ctx, cld, 0, &err); CL(err);
    acq = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    rel = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");
    cl_program pg = clCreateProgramWithSource(ctx, 1, &ksrc, 0, &err); CL(err); CL(clBuildProgram(pg, 1, &cld, "", 0, 0));
    kern = clCreateKernel(pg, "x", &err); CL(err);
    struct { VkFormat f; const char *n; uint32_t b; } fm[] = {
        {VK_FORMAT_R8_UNORM, "R8", 1}, {VK_FORMAT_R8G8_UNORM, "RG8", 2}, {VK_FORMAT_R32_SFLOAT, "R32F", 4},
        {VK_FORMAT_R32_UINT, "R32UI", 4}, {VK_FORMAT_R8G8B8A8_UNORM, "RGBA8", 4}, {VK_FORMAT_B8G8R8A8_UNORM, "BGRA8", 4},
        {VK_FORMAT_R8G8B8A8_UINT, "RGBA8UI", 4}, {VK_FORMAT_A2B10G10R10_UNORM_PACK32, "A2B10G10R10", 4}, {VK_FORMAT_R16G16_UNORM, "RG16", 4}};
    uint32_t sizes[][2] = {{33, 7}, {1921, 3}};
    if (getenv("IDP_SIZE")) { /* WxH for both sizes: a frame's plane, say */
        sscanf(getenv("IDP_SIZE"), "%ux%u", &sizes[0][0], &sizes[0][1]);
        sizes[1][0] = sizes[0][0];
        sizes[1][1] = sizes[0][1];
    }
    const char *only = getenv("IDP_FORMAT"); /* one format's name, to keep a run short */
    for (unsigned f = 0; f < sizeof fm / sizeof fm[0]; f++)
        for (unsigned s = 0; s < 2; s++)
            if (!only || strcmp(only, fm[f].n) == 0)
            for (int ded = 0; ded <= 1; ded++) for (int sub = 0; sub <= 1; sub++)
                one(fm[f].f, fm[f].n, fm[f].b, sizes[s][0], sizes[s][1], 0, 0, 1, ded, sub);
    return 0;
}
