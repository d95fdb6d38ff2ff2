#pragma once
// Names of the data handed to Catalyst, shared with catalyst_scripts/ (TrivialProducer
// registrationName) and the array names every output carries.
namespace octoflow::adaptors {

constexpr const char* kGridChannel = "grid";          // uniform vtkImageData
constexpr const char* kTracersChannel = "tracers";    // vtkPolyData, vertex cells
constexpr const char* kSurfaceChannel = "surface";    // GPU-extracted isosurface
constexpr const char* kAmrChannel = "amr";            // octree (vtkNonOverlappingAMR)

constexpr const char* kDensityArray = "density";
constexpr const char* kVelocityArray = "velocity";
constexpr const char* kIdArray = "id";        // a tracer's id (Int64, stable for its life)
constexpr const char* kAgeArray = "age";      // a tracer's lattice time since release
constexpr const char* kNormalsArray = "Normals";  // a surface's point normals (ParaView's name)

}  // namespace octoflow::adaptors
